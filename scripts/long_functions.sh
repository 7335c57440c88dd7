#!/usr/bin/env bash
# Functions (and lambdas' enclosing functions) longer than a limit, by Universal Ctags' end lines:
# DEVELOPERS' rule is that none exceeds 100 lines without a reason stated beside it
# ("// long: <why>" in the comment right above its signature).
set -euo pipefail
limit=${1:-100}
cd "$(dirname "$0")/.."
git ls-files '*.cc' '*.h' '*.cpp' | grep -v '^examples/.*/build' |
  xargs ctags -x --_xformat='%n %{end} %F %N' --c++-kinds=f --fields=+ne --languages=C++ 2>/dev/null |
  awk -v limit="$limit" '$2 != "" && $2 - $1 + 1 > limit { print $2 - $1 + 1, $3 ":" $1, $4 }' |
  sort -rn | {
  found=0
  while read -r n where name; do
    file=${where%%:*}; line=${where##*:}
    # The comment block right above the signature may state the reason: a line "// long: why".
    if awk -v end="$line" 'NR < end { if ($0 ~ /^[[:space:]]*\/\//) { block = block "\n" $0 } else { block = "" } }
                         END { exit !(block ~ /\/\/ long:/) }' "$file"; then continue; fi
    echo "$n $where $name"
    found=1
  done
  exit "$found"
}
