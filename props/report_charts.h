// The plots of the campaign report (report.h): cases per second and coverage
// over time (CampaignResult::timeline), coverage per pass and per failure mode
// (CampaignStats::passes, failureModeCases), each an inline SVG chart
// (svg_chart.h) followed by the table of its numbers.
#pragma once

#include "props/campaign.h"

#include <string>

namespace graphvet::props {

/// `<section id="charts">` with the four charts and their tables.
std::string renderChartsSection(const CampaignResult &result);

} // namespace graphvet::props
