#!/usr/bin/env bash
# Fails, naming each line, where a tracked C++ or CUDA source differs from what clang-format makes
# of it under the repository's .clang-format (Debian 12's clang-format 14). Fix with
#   git ls-files '*.cc' '*.h' '*.cu' '*.cuh' | xargs clang-format -i
# Generated tables that must stay as printed sit between `// clang-format off` and `on`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
git ls-files -z '*.cc' '*.h' '*.cu' '*.cuh' | xargs -0 clang-format --dry-run --Werror
echo "check_format: $(git ls-files '*.cc' '*.h' '*.cu' '*.cuh' | wc -l) files formatted"
