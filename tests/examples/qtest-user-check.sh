#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# scripts/qtest-user.sh as users meet it (docs/qtest.md), on small test
# directories made in a temporary directory outside the clone. TAP.
#
#  - a relative file= of a generator names a file in the test's directory,
#    whatever directory the script is called from; the same program
#    checks the replay's cycle-0 rule (docs/replay.md) with exact counts
#    and that qndk_start() adds -nodefaults itself;
#  - a program that polls STATUS without stepping the clock is stopped by
#    the per-program time limit (--timeout, QTEST_USER_TIMEOUT) with a
#    message that says it timed out and what to do, and its QEMU is gone;
#  - QTEST_QEMU_BINARY is honoured (a relative path too) and a wrong one is
#    named in the error;
#  - the documented pytest command names /usr/bin/python3, and every
#    function of the driver's header is in docs/qtest.md with its
#    declaration.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
QTU="$REPO/scripts/qtest-user.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/ndk-qtest-user-XXXXXX") || exit 1
case "$(readlink -f "$work")/" in
    "$(readlink -f "$REPO")"/*)
        rm -rf "$work"; work=$(mktemp -d /tmp/ndk-qtest-user-XXXXXX) || exit 1;;
esac
trap 'rm -rf "$work"' EXIT
mark="ndk_qtu_$$_$RANDOM"

n=0 failed=0
# verdict DESCRIPTION OUTPUT: ok when the command just before succeeded,
# else not ok with OUTPUT as diagnostics
verdict() {
    local status=$?
    n=$((n + 1))
    if [ $status = 0 ]; then
        echo "ok $n - $1"
    else
        failed=1
        echo "not ok $n - $1"
        while IFS= read -r line; do echo "# $line"; done <<< "$2"
    fi
}
has() { grep -qF -- "$2" <<< "$1"; }

# ---- relative file=, cycle 0 of a replay, -nodefaults ------------------
mkdir -p "$work/tests" "$work/caller"
cat > "$work/tests/trace.txt" <<'EOF'
# SPDX-License-Identifier: GPL-2.0-or-later
# Cycle 0 of each probe: MFB bus events and BRAKE are not counted, MVB
# items and stalls and the bands are (docs/replay.md, "Cycles").
pcie0 rq.src=1 rq.dst=1 rq.sof=1 brake=1 tags=0
pcie0 rq.src=1 rq.dst=1 rq.eof=1 rq.pos0=3
pcie0 rq.src=1 rq.dst=1 rq.sof=1 rq.eof=1 rq.pos0=7 brake=1
pcie0 rq.src=1 tags=0
pcie0 cycles=10
dma0 up.src=1 up.dst=1 up.sof=1 up.eof=1 up.pos0=0 up.vld=1 up.msrc=1 up.mdst=1
dma0 up.vld=1 up.msrc=1 up.mdst=1
dma0 up.msrc=1
dma0 up.src=1 up.dst=1 up.sof=1 up.eof=1 up.pos0=0
dma0 cycles=10
EOF
# the caller's directory has a trace.txt too, one QEMU refuses: it must
# not be the one read
echo "pcie0 no.such.field=1" > "$work/caller/trace.txt"
cat > "$work/tests/test-relative.c" <<'EOF'
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "qemu/osdep.h"
#include "qobject/qdict.h"
#include "qobject/qlist.h"
#include "ndk-telemetry.h"

static void test_replay_cycle0(void)
{
    /* relative: trace.txt beside this file */
    QNdkTelemetry *t = qndk_start("q35",
        "-object telemetry-traffic-replay,id=t0,file=trace.txt "
        "-device ndk-pcie-telemetry,traffic=t0");

    qndk_step(t, 200000);           /* 19 PCIe, 9 DMA windows closed */
    qndk_snapshot(t);
    /* RQ: cycle 0 (a word with SOF, BRAKE 0) is not counted, and the
     * frame it opened is not seen: cycle 1's EOF word counts as a word
     * only. Cycle 2 (a one-word frame of 8 items), cycle 3 a stall. */
    g_assert_cmpuint(qndk_bus_counter(t, 0, QNDK_RQ, 0, PTL_CH_WORDS), ==, 2);
    g_assert_cmpuint(qndk_bus_counter(t, 0, QNDK_RQ, 0, PTL_CH_SOF), ==, 1);
    g_assert_cmpuint(qndk_bus_counter(t, 0, QNDK_RQ, 0, PTL_CH_ITEMS), ==, 8);
    g_assert_cmpuint(qndk_bus_counter(t, 0, QNDK_RQ, 0, PTL_CH_REGION0),
                     ==, 1);
    g_assert_cmpuint(qndk_bus_counter(t, 0, QNDK_RQ, 0, PTL_CH_REGION0 + 1),
                     ==, 0);
    g_assert_cmpuint(qndk_bus_counter(t, 0, QNDK_RQ, 0, PTL_CH_STALL), ==, 1);
    g_assert_cmpuint(qndk_brake(t, 0, 0), ==, 1);
    /* the bands do count cycle 0 after the card's reset: tags 0 twice */
    g_assert_cmpuint(qndk_band(t, 0, PTL_HIST_TAGS, 0), ==, 2);
    /* DMA UP: the MVB items of cycles 0 and 1 both count, the MFB frame
     * of cycle 0 does not */
    g_assert_cmpuint(qndk_bus_counter(t, 0, QNDK_UP, 0, PTL_CH_MVB), ==, 2);
    g_assert_cmpuint(qndk_bus_counter(t, 0, QNDK_UP, 0, PTL_CH_MVB_STALL),
                     ==, 1);
    g_assert_cmpuint(qndk_bus_counter(t, 0, QNDK_UP, 0, PTL_CH_WORDS), ==, 1);
    g_assert_cmpuint(qndk_bus_counter(t, 0, QNDK_UP, 0, PTL_CH_SOF), ==, 1);
    /* window 0 of the cycle counter is one cycle short */
    g_assert_cmpuint(qndk_cycles(t, 0, false), ==,
                     19 * t->lay.drain_period - 1);
    g_assert_cmpuint(qndk_cycles(t, 0, true), ==,
                     9 * t->lay.drain_period - 1);
    qndk_stop(t);
}

/* qndk_start() adds -nodefaults itself: no default VGA on the bus */
static void test_nodefaults(void)
{
    QNdkTelemetry *t = qndk_start("q35", "-device ndk-pcie-telemetry");
    QDict *rsp = qtest_qmp(t->qts, "{ 'execute': 'query-pci' }");
    QListEntry *be, *de;
    unsigned cards = 0;

    QLIST_FOREACH_ENTRY(qdict_get_qlist(rsp, "return"), be) {
        QDict *bus = qobject_to(QDict, qlist_entry_obj(be));

        QLIST_FOREACH_ENTRY(qdict_get_qlist(bus, "devices"), de) {
            QDict *dev = qobject_to(QDict, qlist_entry_obj(de));
            QDict *ci = qdict_get_qdict(dev, "class_info");
            QDict *id = qdict_get_qdict(dev, "id");

            /* no display controller (class 03) */
            g_assert_cmphex(qdict_get_int(ci, "class") >> 8, !=, 0x03);
            cards += qdict_get_int(id, "vendor") == PTL_QEMU_VENDOR_ID &&
                     qdict_get_int(id, "device") == PTL_QEMU_DEVICE_ID;
        }
    }
    g_assert_cmpuint(cards, ==, 1);
    qobject_unref(rsp);
    qndk_stop(t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/qtu/replay-cycle0", test_replay_cycle0);
    qtest_add_func("/qtu/nodefaults", test_nodefaults);
    return g_test_run();
}
EOF
out=$(cd "$work/caller" && env -u QTEST_QEMU_BINARY "$QTU" ../tests 2>&1)
rc=$?
[ $rc = 0 ]
verdict "relative file= resolves in the test's directory, called from another" "$out"
has "$out" "ok 1 /x86_64/qtu/replay-cycle0"
verdict "the replay counts cycle 0 as docs/replay.md says (exact counts)" "$out"
has "$out" "ok 2 /x86_64/qtu/nodefaults"
verdict "qndk_start() adds -nodefaults itself (no VGA, one card)" "$out"
has "$out" "# working directory: $work/tests"
verdict "the output names the working directory" "$out"

# ---- the per-program time limit ------------------------------------------
mkdir -p "$work/hang"
cat > "$work/hang/test-hang.c" <<'EOF'
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "qemu/osdep.h"
#include "ndk-telemetry.h"

/* wrong on purpose: BUSY rises only when virtual time moves */
static void test_poll_without_step(void)
{
    QNdkTelemetry *t = qndk_start("q35", "-name " stringify(MARK) " "
                                  "-device ndk-pcie-telemetry");

    qndk_writel(t, PTL_REG_COMMAND, PTL_CMD_SNAPSHOT);
    while (!(qndk_status(t) & PTL_STATUS_BUSY)) {
        /* no qndk_step(): loops for ever */
    }
    qndk_stop(t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/qtu/poll-without-step", test_poll_without_step);
    return g_test_run();
}
EOF
# built once, so that the timed runs below are mostly the program
if ! out=$(env -u QTEST_QEMU_BINARY QTEST_USER_CFLAGS="-DMARK=$mark" \
           "$QTU" --no-run "$work/hang" 2>&1); then
    false; verdict "the looping test builds" "$out"
fi
for how in option env; do
    if [ $how = option ]; then limit=3; args=(--timeout 3); envs=()
    else limit=2; args=(); envs=(QTEST_USER_TIMEOUT=2)
    fi
    start=$(date +%s)
    # our own guard: without the limit this call would never return
    out=$(env -u QTEST_QEMU_BINARY "${envs[@]}" \
              QTEST_USER_CFLAGS="-DMARK=$mark" \
              timeout 120 "$QTU" "${args[@]}" "$work/hang" 2>&1)
    rc=$? took=$(($(date +%s) - start))
    [ $rc = 1 ]
    verdict "a test polling without clock steps fails ($how, ${limit} s)" "$out"
    # the limit, the build (seconds) and SIGKILL's 10 s grace at most
    [ "$took" -ge "$limit" ] && [ "$took" -le $((limit + 40)) ]
    verdict "... within the bound (${took} s)" "$out"
    has "$out" "not ok 1 test-hang timed out after $limit s"
    verdict "... saying it timed out" "$out"
    has "$out" "Step the clock in the loop (qndk_step(t," &&
        has "$out" "--timeout SECONDS"
    verdict "... and what to do (step the clock, raise --timeout)" "$out"
    sleep 0.5
    left=$(pgrep -f -- "$mark")
    [ -z "$left" ]
    verdict "... and its QEMU is gone" "left: $left"
    # ours, marked with this run's id: never leave one behind
    # shellcheck disable=SC2086
    [ -z "$left" ] || kill -9 $left 2>/dev/null
done
out=$("$QTU" --timeout soon "$work/hang" 2>&1)
rc=$?
[ $rc = 2 ] && has "$out" "not 'soon'"
verdict "a timeout that is not whole seconds is refused" "$out"

# ---- QTEST_QEMU_BINARY ---------------------------------------------------
out=$(QTEST_QEMU_BINARY=/nonexistent/qemu-system-x86_64 \
      timeout 60 "$QTU" "$work/tests" 2>&1)
rc=$?
[ $rc = 1 ] &&
    has "$out" "QTEST_QEMU_BINARY=/nonexistent/qemu-system-x86_64" &&
    ! has "$out" "# built"
verdict "QTEST_QEMU_BINARY=/nonexistent is an error naming it" "$out"
out=$(QTEST_QEMU_BINARY=/bin/true timeout 60 "$QTU" "$work/tests" 2>&1)
rc=$?
[ $rc = 1 ] && has "$out" "QTEST_QEMU_BINARY=/bin/true" &&
    has "$out" "no ndk-pcie-telemetry device"
verdict "a QEMU without the card is an error naming it" "$out"
# a wrapper that records its arguments, named as libqtest wants
# (*-system-<arch>), given as a path relative to the caller
mkdir -p "$work/wrap"
cat > "$work/wrap/qemu-system-x86_64" <<EOF
#!/bin/sh
echo "\$*" >> "$work/wrap/calls"
exec "$REPO/build/qemu-system-x86_64" "\$@"
EOF
chmod +x "$work/wrap/qemu-system-x86_64"
out=$(cd "$work" && QTEST_QEMU_BINARY=wrap/qemu-system-x86_64 \
      timeout 120 "$QTU" "$work/tests" -- -p /x86_64/qtu/nodefaults 2>&1)
rc=$?
[ $rc = 0 ] && has "$out" "# QEMU: $work/wrap/qemu-system-x86_64" &&
    grep -q -- "-qtest unix:" "$work/wrap/calls"
verdict "QTEST_QEMU_BINARY is honoured (a relative path, from the caller)" \
    "$out$(printf '\ncalls:\n'; cat "$work/wrap/calls" 2>&1)"
out=$("$QTU" --help 2>&1)
has "$out" "--timeout SECONDS" && has "$out" "QTEST_QEMU_BINARY"
verdict "the usage names --timeout and QTEST_QEMU_BINARY" "$out"

# ---- the documents ---------------------------------------------------------
bad=$(grep -n "python3 -m pytest" "$REPO/README.md" "$REPO/docs/qtest.md" |
      grep -v "/usr/bin/python3 -m pytest")
[ -z "$bad" ]
verdict "README.md and docs/qtest.md run pytest with /usr/bin/python3" "$bad"
miss=""
for f in README.md docs/qtest.md; do
    grep -qF "/usr/bin/python3 -c 'import pytest'" "$REPO/$f" ||
        miss="$miss $f"
done
[ -z "$miss" ]
verdict "... and say how to check it" "missing in:$miss"
out=$(/usr/bin/python3 - "$REPO/tests/qtest/qos/ndk-telemetry.h" \
      "$REPO/docs/qtest.md" <<'PY'
import re, sys
hdr = open(sys.argv[1]).read()
doc = open(sys.argv[2]).read()
hdr = re.sub(r'/\*.*?\*/', '', hdr, flags=re.S)
hdr = re.sub(r'^#.*$', '', hdr, flags=re.M)
norm = lambda s: re.sub(r'\s*([(),*])\s*', r'\1', ' '.join(s.split()))
doc = norm(doc)
missing = []
names = 0
for decl in hdr.split(';'):
    decl = re.sub(r'G_GNUC_PRINTF\([^)]*\)', '', decl)
    m = re.search(r'\b(qndk_\w+)\s*\(', decl)
    if not m:
        m = re.search(r'\bextern\s.*\b(qndk_\w+)\s*$', decl.strip())
        if not m:
            continue
    names += 1
    if '`%s`' % norm(decl) not in doc:
        missing.append(' '.join(decl.split()))
if names < 30:
    print('only %d declarations found in the header' % names)
for d in missing:
    print('not in docs/qtest.md: ' + d)
PY
)
[ -z "$out" ]
verdict "docs/qtest.md has every declaration of ndk-telemetry.h" "$out"

echo "1..$n"
exit $failed
