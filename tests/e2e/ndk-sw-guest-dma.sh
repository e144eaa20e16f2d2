#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# CESNET's nfb driver, ndp-tool and nfb-dma on a card with dma-queues=2,
# through scripts/ndk-sw-guest.sh on the prepared ndk-sw checkout that
# NDK_SW_DIR names: ndp-tool loopback-hw (64 and 1500 B), generate (64 and
# 1500 B) and read from the card's RX generator move the packets they
# say; nfb-dma's counters of queue 0 equal ndp-tool's packets and bytes;
# and the telemetry block's totals (pcie-telemetry --prometheus, cleared
# before the traffic) equal the rule of docs/dma.md applied to every
# transfer the engine made, which QEMU's trace events (ndk_dma_xfer)
# record on the host. Skipped (exit 77) when NDK_SW_DIR is not set.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${NDK_SW_DIR:-}" ]; then
    echo "SKIP: NDK_SW_DIR is not set (the directory of a prepared ndk-sw checkout)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

gls=/firmware/mi_bus0/dbg_gls0
run="pcie-telemetry -d /dev/nfb0 -c
nfb-bus -p $gls 0 1
ndp-tool loopback-hw -i 0 -p 2000 -s 64
ndp-tool loopback-hw -i 0 -p 1000 -s 1500
nfb-bus -p $gls 0 0
ndp-tool generate -i 0 -s 64 -p 5000
ndp-tool generate -i 0 -s 1500 -p 5000
nfb-dma -i 0
nfb-bus -p $gls 8 1
nfb-bus -p $gls/mfb_gen2dma 8 0
nfb-bus -p $gls/mfb_gen2dma 4 40
nfb-bus -p $gls/mfb_gen2dma 0 1
ndp-tool read -i 0 -p 1000
nfb-bus -p $gls/mfb_gen2dma 0 0
nfb-bus -p $gls 8 0
pcie-telemetry -d /dev/nfb0 -t 0 --prometheus"
NDK_SW_CARD_PROPS=dma-queues=2 NDK_SW_GUEST_MEM=512M NDK_SW_GUEST_RUN="$run" \
    "$REPO/scripts/ndk-sw-guest.sh" "$NDK_SW_DIR" \
    -trace ndk_dma_xfer -trace ptm_mmio_read -D "$tmp/trace" < /dev/null \
    > "$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ "$rc" = 0 ] || fail "ndk-sw-guest.sh exited with $rc"

exec /usr/bin/python3 - "$tmp/out" "$tmp/trace" <<'PY'
import re, sys

out = open(sys.argv[1], errors='replace').read()
trace = open(sys.argv[2], errors='replace').read().splitlines()

def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)

# what each command printed
blocks = {}
for part in re.split(r'^\$ ', out, flags=re.M)[1:]:
    cmd, _, text = part.partition('\n')
    blocks.setdefault(cmd.strip(), []).append(text)

def tool(cmd):
    if cmd not in blocks:
        fail('no output of ' + cmd)
    text = blocks[cmd][0]
    p = re.search(r'^Packets +: +(\d+)', text, re.M)
    b = re.search(r'^Bytes +: +(\d+)', text, re.M)
    if not p or not b:
        fail(cmd + ' printed no packet and byte counts')
    return int(p.group(1)), int(b.group(1))

runs = [('ndp-tool loopback-hw -i 0 -p 2000 -s 64', 2000, 64),
        ('ndp-tool loopback-hw -i 0 -p 1000 -s 1500', 1000, 1500),
        ('ndp-tool generate -i 0 -s 64 -p 5000', 5000, 64),
        ('ndp-tool generate -i 0 -s 1500 -p 5000', 5000, 1500),
        ('ndp-tool read -i 0 -p 1000', 1000, 64)]
for cmd, n, size in runs:
    got = tool(cmd)
    if got != (n, n * size):
        fail('%s: %s packets/bytes, not %s' % (cmd, got, (n, n * size)))
    print('ok: %s: %d packets, %d bytes' % (cmd, got[0], got[1]))

# nfb-dma of queue 0 against ndp-tool
dma = blocks.get('nfb-dma -i 0', [''])[0]
def field(section, name):
    m = re.search(section + r' NDP controller -+\n(.*?)(?:\n\n|\Z)', dma, re.S)
    if not m:
        fail('nfb-dma printed no ' + section)
    f = re.search(r'^' + re.escape(name) + r' +: +(\d+)', m.group(1), re.M)
    if not f:
        fail('nfb-dma %s has no %s' % (section, name))
    return int(f.group(1))
tx = (2000 + 1000 + 5000 + 5000, 2000 * 64 + 1000 * 1500 + 5000 * 64 + 5000 * 1500)
rx = (2000 + 1000, 2000 * 64 + 1000 * 1500)
got_tx = (field('TX 0', 'Sent'), field('TX 0', 'Sent bytes'))
got_rx = (field('RX 0', 'Received'), field('RX 0', 'Received bytes'))
if got_tx != tx or got_rx != rx:
    fail('nfb-dma: TX %s RX %s, ndp-tool moved TX %s RX %s'
         % (got_tx, got_rx, tx, rx))
if field('RX 0', 'Discarded') != 0:
    fail('nfb-dma: RX 0 discarded frames while ndp-tool looped back')
print('ok: nfb-dma queue 0: TX %s, RX %s' % (got_tx, got_rx))

# the rule over the transfers, with the settings PCIE_STATUS reported
status = None
xfers = []
for line in trace:
    line = re.sub(r'^\d+@[\d.]+:', '', line)
    m = re.match(r'ptm_mmio_read addr 0x40 size 4 val 0x([0-9a-f]+)', line)
    if m:
        status = int(m.group(1), 16)
    m = re.match(r'ndk_dma_xfer (rx|tx)(\d+) kind (\d) addr 0x([0-9a-f]+) bytes (\d+)', line)
    if m:
        xfers.append((int(m.group(3)), int(m.group(4), 16), int(m.group(5))))
if status is None or not xfers:
    fail('no PCIE_STATUS read or no transfer in the trace')
mps, mrrs = 128 << (status & 7), 128 << (status >> 3 & 7)
rcb = 128 if status >> 8 & 1 else 64
W = 64
exp = {b: {'words': 0, 'transactions': 0, 'items': 0, 'mvb_items': 0}
       for b in ('RQ', 'RC', 'UP', 'DOWN')}
def frame(bus, nbytes, mvb):
    if nbytes:
        exp[bus]['words'] += -(-nbytes // W)
        exp[bus]['transactions'] += 1
        exp[bus]['items'] += -(-nbytes // 4)
    exp[bus]['mvb_items'] += mvb
for kind, a, n in xfers:
    if kind >= 2:
        frame('UP', n, 1)
        e = a + n
        while a < e:
            l = min((a // mps + 1) * mps, e) - a
            frame('RQ', 16 + l, 0)
            a += l
    else:
        frame('UP', 0, 1)
        e = a + n
        while a < e:
            l = min((a // mrrs + 1) * mrrs, e) - a
            frame('RQ', 16, 0)
            c = a
            while c < a + l:
                k = (min((c // rcb + 1) * rcb, a + l) - c) if c == a and c % rcb \
                    else min(mps, a + l - c)
                frame('RC', 12 + k, 0)
                frame('DOWN', k, 1)
                c += k
            a += l

prom = blocks.get('pcie-telemetry -d /dev/nfb0 -t 0 --prometheus', [''])[0]
got = {}
for m in re.finditer(r'^ndk_pcie_telemetry_(words|transactions|items|mvb_items)_total\{[^}]*bus="(\w+)"[^}]*\} (\d+)',
                     prom, re.M):
    got.setdefault(m.group(2), {})[m.group(1)] = int(m.group(3))
for bus, want in exp.items():
    for k, v in want.items():
        if bus in ('RQ', 'RC') and k == 'mvb_items':
            continue
        g = got.get(bus, {}).get(k)
        if g != v:
            fail('telemetry %s %s: %s, the rule over %d transfers gives %d'
                 % (bus, k, g, len(xfers), v))
print('ok: telemetry totals of %d transfers (MPS %d, MRRS %d, RCB %d): %s'
      % (len(xfers), mps, mrrs, rcb,
         ', '.join('%s %d frames' % (b, exp[b]['transactions']) for b in exp)))
PY
