// The campaign report: one self-contained HTML page (inline CSS and SVG, no
// external resources) with the campaign figures, rule and feature coverage,
// and for each finding the before/after pictures with the conflicting nodes
// highlighted, the witness schedules, the differing bytes and the replay
// command. Pictures are drawn by graphviz's `dot`; without it the page shows
// the DOT text instead.
#pragma once

#include "props/campaign.h"

#include <string>

namespace graphvet::props {

struct ReportOptions {
  std::string title = "graphvet fuzz campaign";
  /// The command line that ran the campaign (shown verbatim).
  std::string commandLine;
  bool drawPictures = true;
};

std::string renderReport(const CampaignResult &result, const CampaignOptions &campaign,
                         const ReportOptions &opts = {});

/// HTML text escaping (&, <, >, ").
std::string htmlEscape(const std::string &s);

} // namespace graphvet::props
