#!/usr/bin/env bash
# Assembles every .ptx sample under ptx_samples/ with ptxas for the target it declares
# and exits non-zero if any of them fails.
#
# The architecture is the highest sm_XX entry of the file's `.target` directive
# (`.target sm_75, sm_80, texmode_independent` -> -arch=sm_80). Extra ptxas options, when a
# sample needs them, come from a header comment `// ptxas-options: ...` (e.g. `-c` for
# modules with unresolved .extern symbols).
#
# Usage: ptx_samples/check_assemble.sh [FILE.ptx ...]   (default: every sample)
# Environment: PTXAS (default: ptxas), PTXAS_WERROR=1 also fails on ptxas warnings.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ptxas="${PTXAS:-ptxas}"

if ! command -v "$ptxas" >/dev/null 2>&1; then
    echo "check_assemble: $ptxas not found" >&2
    exit 2
fi

if [ "$#" -gt 0 ]; then
    files=("$@")
else
    mapfile -t files < <(find "$here" -name '*.ptx' -not -path '*/.cache/*' | sort)
fi

fail=0
count=0
for f in "${files[@]}"; do
    target_line="$(grep -m1 -E '^[[:space:]]*\.target[[:space:]]' "$f" || true)"
    # Highest SM entry wins, as in ptxas: `.target sm_75, sm_80, debug` -> sm_80.
    arch="$(grep -oE 'sm_[0-9]+[a-z]?' <<<"$target_line" | sort -t_ -k2 -n | tail -n1 || true)"
    if [ -z "$arch" ]; then
        echo "FAIL $f: no .target directive" >&2
        fail=1
        continue
    fi
    if [[ "$f" == */unsupported-instruction/*.bad.ptx ]]; then
        # these use an instruction their .target lacks: ptxas must reject them
        if "$ptxas" -arch="$arch" "$f" -o /dev/null >/dev/null 2>&1; then
            echo "FAIL ${f#"$here"/}: ptxas accepts a sample meant to be rejected" >&2
            fail=1
        else
            echo "ok   ${f#"$here"/} (-arch=$arch: rejected, as it should be)"
        fi
        count=$((count + 1))
        continue
    fi
    opts="$(grep -m1 -E '^// ptxas-options:' "$f" | sed -E 's#^// ptxas-options:##' || true)"
    extra=()
    [ "${PTXAS_WERROR:-0}" = 1 ] && extra+=(--warning-as-error)
    # shellcheck disable=SC2086  # opts is a whitespace-separated option list
    if out="$("$ptxas" -arch="$arch" $opts "${extra[@]}" "$f" -o /dev/null 2>&1)"; then
        [ -n "$out" ] && printf '%s\n' "$out"
        echo "ok   ${f#"$here"/} (-arch=$arch$opts)"
    else
        printf '%s\n' "$out" >&2
        echo "FAIL ${f#"$here"/} (-arch=$arch$opts)" >&2
        fail=1
    fi
    count=$((count + 1))
done
echo "check_assemble: $count file(s) assembled, $([ $fail = 0 ] && echo 'all ok' || echo 'FAILURES')"
exit $fail
