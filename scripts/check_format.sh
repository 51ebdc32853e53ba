#!/usr/bin/env bash
# Checks that every C++ file of the repository is as .clang-format (Google style, 120 columns)
# lays it out; prints the files that are not and how to fix them. Exit 0 clean, 1 not, 2 no tool.
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
fmt=${CLANG_FORMAT:-clang-format}
if ! command -v "$fmt" >/dev/null 2>&1; then
  echo "check_format: $fmt not found (scripts/setup.sh installs clang-format)"
  exit 2
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -co --exclude-standard -- '*.cc' '*.h' | while read -r f; do [ -f "$f" ] && echo "$f"; done)
else
  mapfile -t files < <(find engine protocols apps tests bench examples -name '*.cc' -o -name '*.h' 2>/dev/null)
fi
# One clang-format run over all files; each finding names its file ("path:line:col: warning: ...").
mapfile -t bad < <("$fmt" --dry-run "${files[@]}" 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: \(warning\|error\): .*/\1/p' | sort -u)
if [ ${#bad[@]} -ne 0 ]; then
  echo "check_format: ${#bad[@]} of ${#files[@]} C++ files are not formatted as .clang-format says:"
  printf '  %s\n' "${bad[@]}"
  echo "fix: $fmt -i ${bad[*]}"
  exit 1
fi
echo "check_format: ${#files[@]} C++ files formatted as .clang-format says"
