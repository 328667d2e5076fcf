#!/usr/bin/env bash
# Checks the library's include graph against its layers (cmake/ShaleLayers.cmake): every
# #include "..." of a file in a layer names a public header (shale/...) or a header of the same
# layer or of a layer below it, and no include path climbs with "..". Exit 1 lists offenders.
set -euo pipefail
cd "$(dirname "$0")/.."
layers_file=cmake/ShaleLayers.cmake

declare -A dirs below
while read -r name kind rest; do
  case "$kind" in
    DIRS) dirs[$name]=$rest ;;
    BELOW) below[$name]=$rest ;;
  esac
done < <(sed -nE 's/^set\(SHALE_LAYER_([a-z]+)_(DIRS|BELOW) ?"?([^")]*)"?\)$/\1 \2 \3/p' "$layers_file")

# The layer that owns a path (a file or an include), or nothing.
layer_of() {
  local path=$1 name dir
  for name in "${!dirs[@]}"; do
    for dir in ${dirs[$name]}; do
      [[ "$path" == "$dir"/* ]] && { echo "$name"; return; }
    done
  done
}

bad=0
for name in "${!dirs[@]}"; do
  allowed=" $name ${below[$name]:-} "
  for dir in ${dirs[$name]}; do
    while IFS=: read -r file line include; do
      include=${include#*\"}; include=${include%%\"*}
      if [[ "$include" == *..* ]]; then
        echo "$file:$line: relative include \"$include\""; bad=1; continue
      fi
      [[ "$include" == shale/* ]] && continue
      target=$(layer_of "$include")
      if [[ -z "$target" ]]; then
        echo "$file:$line: \"$include\" is in no layer"; bad=1
      elif [[ "$allowed" != *" $target "* ]]; then
        echo "$file:$line: layer $name includes \"$include\" of layer $target"; bad=1
      fi
    done < <(grep -nE '^\s*#\s*include\s*"' "$dir"/*.h "$dir"/*.cc 2>/dev/null || true)
  done
done
if ((bad)); then
  exit 1
fi
echo "include graph: ${#dirs[@]} layers, every include points down"
