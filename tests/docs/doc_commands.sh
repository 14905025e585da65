#!/usr/bin/env bash
# Runs every `liembs` command shown in README.md and docs/*.md against the build, so the
# documentation cannot drift from the program. In each ```sh block, lines starting with
# `build/bin/liembs` (with `\` continuations joined) and `printf` lines (fixture files the
# text creates) run in order, in a scratch folder where configs/, models/, studies/ and
# build/bin point at the source and build trees. Each must exit 0. A fenced block right after
# a line `<!-- doc-commands file: NAME -->` is written to NAME in the scratch folder first, so
# a file the text shows (the user guide's reference TOML) runs verbatim.
# Commands matching SKIP_REGEX (optional) are listed but not run.
#   usage: doc_commands.sh SOURCE_DIR BINARY_DIR SCRATCH_DIR [SKIP_REGEX]
set -uo pipefail
source_dir=$1 binary_dir=$2 scratch=$3 skip=${4:-}
rm -rf "$scratch" && mkdir -p "$scratch/build"
for folder in configs models studies tests; do
  [[ -e "$source_dir/$folder" ]] && ln -s "$source_dir/$folder" "$scratch/$folder"
done
ln -s "$binary_dir/bin" "$scratch/build/bin"
ln -s "$binary_dir/lib" "$scratch/build/lib"

failures=0 commands=0 timings=()
for document in "$source_dir/README.md" "$source_dir"/docs/*.md; do
  [[ -f "$document" ]] || continue
  in_block=0 pending="" file_name="" file_block=0
  while IFS= read -r line || [[ -n "$line" ]]; do
    if [[ $file_block -eq 1 ]]; then
      if [[ "$line" =~ ^\`\`\` ]]; then file_block=0; file_name=""; else printf '%s\n' "$line" >> "$scratch/$file_name"; fi
      continue
    fi
    if [[ $in_block -eq 0 ]]; then
      if [[ "$line" =~ ^\<!--\ doc-commands\ file:\ ([^ ]+)\ --\>$ ]]; then
        file_name=${BASH_REMATCH[1]}
        continue
      fi
      if [[ -n "$file_name" && "$line" =~ ^\`\`\` ]]; then file_block=1; : > "$scratch/$file_name"; continue; fi
      file_name=""
      [[ "$line" =~ ^\`\`\`sh ]] && in_block=1
      continue
    fi
    if [[ "$line" =~ ^\`\`\` ]]; then in_block=0; pending=""; continue; fi
    if [[ -n "$pending" ]]; then
      pending+=" ${line}"
    elif [[ "$line" =~ ^(build/bin/liembs|printf)\  ]]; then
      pending="$line"
    else
      continue
    fi
    if [[ "$pending" =~ \\$ ]]; then pending=${pending%\\}; continue; fi
    command=${pending%%  #*}   # drop a trailing comment after two spaces
    pending=""
    if [[ -n "$skip" && "$command" =~ $skip ]]; then
      echo "skipped in this build: $command"
      continue
    fi
    commands=$((commands + 1))
    started=$EPOCHREALTIME
    if ! output=$(cd "$scratch" && timeout 300 bash -c "$command" 2>&1 </dev/null); then
      echo "FAILED (${document#"$source_dir"/}): $command"
      echo "$output" | tail -5 | sed 's/^/    /'
      failures=$((failures + 1))
    fi
    timings+=("$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%8.1f", b - a }') s  $command")
  done < "$document"
done
echo "the slowest commands:"
printf '%s\n' "${timings[@]}" | sort -rn | head -5 | cut -c1-160
echo "$commands documented commands run, $failures failed"
[[ $commands -gt 0 && $failures -eq 0 ]]
