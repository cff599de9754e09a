# lit configuration of the FileCheck pass tests: every .graph file here (and
# below) is a test whose RUN lines drive the graphvet binary.
import os

import lit.formats

config.name = "graphvet"
# An external shell, so RUN lines can test exact exit statuses (`cmd; test $? -eq 2`).
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".graph"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.graphvet_obj_root, "tests", "lit")

config.substitutions.append(("%graphvet", config.graphvet_path))
# Checks every `# -----` chunk of a --split-input-file test (one script for all folders).
config.substitutions.append(
    ("%check-chunks", os.path.join(config.test_source_root, "Inputs", "check-chunks.sh")))
# Match whole words only, so a check such as "CHECK: FileCheck" is untouched
# only where it is not a command; the tests never mention the tool otherwise.
config.substitutions.append((r"\bFileCheck\b", config.filecheck_path))
config.substitutions.append((r"\bnot\b(?=\s)", config.not_path))
# Deterministic environment: the tools never read the clock or the locale,
# but keep the shell predictable anyway.
config.environment["LC_ALL"] = "C"
