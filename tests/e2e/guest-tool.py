#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# End to end: boot a Linux guest with five virtual cards, run pcie-telemetry
# in it (guest/e2e-tool.sh) and check what it prints against what the
# traffic sources predict. The pattern source repeats one frame per bus, so
# every counter is a rate times the cycles it covers; the expected rates
# below are worked out by hand from the frame shapes (docs/ndk-pcie-
# telemetry.md, "pattern"), not taken from the tool. TAP output.
import os
import re
import subprocess
import sys
import tempfile

from e2e_support import (REPO, check, guest_steps, json_docs, report,
                          tool_initrd)
from pattern_card import DRAIN, PATTERN, check_pattern, near

# The pattern card at 02:00.0: PATTERN, FRAMES and check_pattern() of
# pattern_card.py.
# Every card drains at the default period but the 4 GHz one: there a window
# of 4096 PCIe cycles lasts 102 MI cycles, fewer than the 3 x 31 its
# deltas take, so the accumulator would be overloaded (lose deltas).
DRAIN_WRAP = 32768

# The first three cards sit behind PCIe root ports at 00:03.0, 00:04.0 and
# 00:05.0, as on a real host: the firmware numbers their buses 1, 2 and 3
# in that order, and the PCI bridge's bus 4.
CARDS = [
    # 01:00.0: 2 endpoints, 2 DMA ports, 4 RQ regions, block at 0x20000;
    # RQ frames of 8 regions fill two words back to back
    '-object telemetry-traffic-pattern,id=t3,rq-frame-bytes=256,'
    'up-frame-bytes=100,up-gap=3,down-frame-bytes=64',
    '-device pcie-root-port,id=rp3,chassis=1,slot=3,addr=03.0',
    '-device ndk-pcie-telemetry,bus=rp3,traffic=t3,pcie-endpoints=2,'
    'dma-ports=2,pcie-rq-mfb-regions=4,block-offset=0x20000',
    '-object telemetry-traffic-pattern,id=t4,' + PATTERN,
    '-device pcie-root-port,id=rp4,chassis=1,slot=4,addr=04.0',
    '-device ndk-pcie-telemetry,bus=rp4,traffic=t4',
    # 03:00.0: 33-bit counters at 4 GHz wrap every 2.15 s
    '-device pcie-root-port,id=rp5,chassis=1,slot=5,addr=05.0',
    '-device ndk-pcie-telemetry,bus=rp5,cnt-width=33,'
    'pcie-clk-freq=4000000000,dma-clk-freq=2000000000,drain-period=%d'
    % DRAIN_WRAP,
    # 00:06.0: on the root bus, as some set-ups have it
    '-device ndk-pcie-telemetry,addr=06.0,devtree=off',
    # 04:01.0: a conventional PCI bus has no extended configuration space
    '-device pcie-pci-bridge,id=pb,addr=07.0',
    '-device ndk-pcie-telemetry,bus=pb,addr=01.0',
]


def run_guest():
    with tempfile.TemporaryDirectory() as tmp:
        initrd = os.path.join(tmp, 'initrd.gz')
        tool_initrd(initrd, 'guest/e2e-tool.sh')
        args = []
        for c in CARDS:
            args += c.split(' ', 1)
        p = subprocess.run([os.path.join(REPO, 'scripts/guest-run.sh'),
                            initrd] + args, capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr


def main():
    rc, console = run_guest()
    steps = guest_steps(console)
    check('guest ran all steps to its end',
          re.search(r'^GUEST-EXIT 0', console, re.M), console[-2000:])

    def step(name):
        return steps.get(name, (None, ''))

    # --list: every card with a tree, its block and offset
    rc_, out = step('list')
    check('--list exits 0', rc_ == 0, out)
    check('--list shows the block at 0x20000 of 01:00.0',
          re.search(r'0000:01:00\.0.*\n(.*\n)*?.*0x20000', out), out)
    check('--list names the card without a device tree',
          re.search(r'0000:00:06\.0', out), out)
    rc_, out = step('version')
    check('--version exits 0 with a version', rc_ == 0 and
          re.search(r'\d+\.\d+\.\d+', out), out)

    # the closed form of the pattern card, over a 1 s interval
    rc_, out = step('pattern-json')
    try:
        doc = json_docs(out)[0]
        bad = check_pattern(doc)
        check('pattern card: every channel equals its closed form within '
              'one drain window', not bad, '\n'.join(bad))
        ep = doc['data']['endpoints'][0]
        check('pattern card: interval measured at the snapshots (%.3f s)'
              % doc['seconds'], 0.95 <= doc['seconds'] <= 1.5, out)
        mhz = ep['pcie_cycles'] / doc['seconds'] / 1e6
        check('pattern card: derived PCIe clock %.1f MHz is 400 +- 15 %%'
              % mhz, near(mhz, 400, 60))
        check('pattern card: free tags 20 and FIFO words 600, now and lowest',
              (ep['tags_free'], ep['tags_free_min'], ep['stfifo_free'],
               ep['stfifo_free_min']) == (20, 20, 600, 600), str(ep))
        cfg = doc['data']['config']
        check('pattern card: config as FACTS.md gives for the defaults',
              cfg == dict(pcie_endpoints=1, dma_ports=1, probe_pcie_regions=2,
                          probe_dma_regions=2, counter_width=48, item_bytes=4,
                          drain_period=4096, hist_bands=4, tag_capacity=256,
                          stfifo_capacity=1024), str(cfg))
        st = doc['data']['status']
        check('pattern card: no flags', st == dict(
            busy=False, lost_deltas=False, readout_overrun=False), str(st))
        check('pattern card: exit status 0', rc_ == 0)
    except (ValueError, KeyError, IndexError, TypeError) as e:
        check('pattern card JSON has the reference schema', False,
              '%r\n%s' % (e, out))

    # the big card, found through its device tree at offset 0x20000
    rc_, out = step('big-text')
    check('big card text: exit 0', rc_ == 0, out)
    check('big card text: title', 'PCIe telemetry - 2 endpoint(s), 2 DMA '
          'port(s) per endpoint' in out, out)
    check('big card text: both endpoints',
          'PCIe endpoint 0' in out and 'PCIe endpoint 1' in out, out)
    names = ['PTC -> PCIe (RQ)', 'PCIe -> PTC (RC)', 'DMA0 -> PTC (UP)',
             'PTC -> DMA0 (DOWN)', 'DMA1 -> PTC (UP)', 'PTC -> DMA1 (DOWN)']
    check('big card text: six bus rows per endpoint',
          all(out.count(n) == 2 for n in names), out)
    rq = [ln for ln in out.splitlines() if ln.startswith('PTC -> PCIe (RQ)')]
    # RQ frames of 8 regions fill 2 words of 4 regions back to back, so
    # words and regions equal the cycles in every drain window; a snapshot
    # may fall between the cycles delta and another channel's delta of the
    # newest window (the accumulator applies them one by one), which moves
    # a share by at most one window of the interval's cycles
    m = re.search(r'^Measured over (\d+\.\d\d) s$', out, re.M)
    window = 100.0 * DRAIN / (float(m.group(1)) * 400e6) if m else 0

    def full_rq(ln):
        f = re.match(r'PTC -> PCIe \(RQ\)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)'
                     r'\s+(\S+) (\S+) (\S+) (\S+)\s', ln)
        return (f and all(near(float(f.group(i)), 100, window + 0.005)
                          for i in (1, 2)) and
                f.group(3) == '0.00' and f.group(4) == '-' and
                [f.group(i) for i in range(5, 9)] == ['100.0'] * 4)
    check('big card text: RQ used 100 %%, words 100 %%, four regions of '
          '100 %% (but for one window in flight: %.3f)' % window,
          m and rq and all(full_rq(ln) for ln in rq), '\n'.join(rq))
    check('big card text: measured-over line and clocks',
          re.search(r'^Measured over \d+\.\d\d s$', out, re.M) and
          re.search(r'PCIe clock \d+\.\d MHz, DMA clock \d+\.\d MHz', out),
          out)
    rc_, out = step('big-json')
    try:
        doc = json_docs(out)[0]
        eps = doc['data']['endpoints']
        check('big card JSON (sysfs path): 2 endpoints of 6 buses',
              rc_ == 0 and len(eps) == 2 and
              all(list(e['buses']) == names for e in eps), out[:3000])
        check('big card JSON: 4 RQ regions, 2 RC regions',
              all(len(e['buses'][names[0]]['regions']) == 4 and
                  len(e['buses'][names[1]]['regions']) == 2 for e in eps))
        cfg = doc['data']['config']
        check('big card JSON: config', (cfg['pcie_endpoints'],
              cfg['dma_ports'], cfg['probe_pcie_regions']) == (2, 2, 4),
              str(cfg))
        up = eps[1]['buses']['DMA1 -> PTC (UP)']
        # 100 B = 25 items in 4 regions = 2 words, 3 idle cycles: period 5
        check('big card JSON: DMA1 UP of endpoint 1 moves 2 words in 5 cycles',
              near(up['words'], eps[1]['dma_cycles'] * 2 / 5, 2 * DRAIN),
              str(up))
    except (ValueError, KeyError, IndexError, TypeError) as e:
        check('big card JSON parses', False, '%r\n%s' % (e, out))

    rc_, out = step('default-card')
    try:
        doc = json_docs(out)[0]
        # 00:06.0 comes first on the bus but has no device tree
        check('no -d: the first card with a block (01:00.0, 2 endpoints) '
              'is read',
              rc_ == 0 and doc['data']['config']['pcie_endpoints'] == 2, out)
    except (ValueError, KeyError, IndexError) as e:
        check('no -d: JSON parses', False, '%r\n%s' % (e, out))

    rc_, out = step('index-1')
    check('-i 1 on a card with one block: exit 6 (no node)', rc_ == 6, out)
    check('-i 1: one line that says it is out of range',
          len(out.strip().splitlines()) == 1 and
          re.search(r'out of range', out), out)

    # -t 0 after -c: the totals restart from zero
    try:
        before = json_docs(step('totals-before')[1])[0]
        after = json_docs(step('totals-after')[1])[0]
        check('-c exits 0', step('clear')[0] == 0, step('clear')[1])
        check('-c says "Counters cleared." as the reference does',
              step('clear')[1] == 'Counters cleared.', step('clear')[1])
        b = before['data']['endpoints'][0]['pcie_cycles']
        a = after['data']['endpoints'][0]['pcie_cycles']
        check('-t 0: seconds is null', before['seconds'] is None and
              after['seconds'] is None)
        # the guest has been up for seconds before; without the clear the
        # count could only have grown, and the clear was moments ago
        check('-t 0 after -c: totals restart (%d cycles before, %d after)'
              % (b, a), b > 400e6 and a < b / 2)
    except (ValueError, KeyError, IndexError) as e:
        check('-t 0 JSON parses', False, repr(e))
    rc_, out = step('totals-text')
    check('-t 0 text: third line is "Totals since the last clear"',
          out.splitlines()[2:3] == ['Totals since the last clear'], out)
    check('-t 0 text: no clock line', 'MHz' not in out, out)

    # wrap-around: 33-bit counters at 4 GHz
    rc_, out = step('wrap-watch')
    try:
        docs = json_docs(out)
        mhz = [d['data']['endpoints'][0]['pcie_cycles'] / d['seconds'] / 1e6
               for d in docs]
        check('watch: runs until interrupted, exit 0 (%d intervals)'
              % len(docs), rc_ == 0 and len(docs) >= 4, out[-500:])
        check('wrap: every interval derives a 4 GHz clock (%s)'
              % ' '.join('%.0f' % m for m in mhz),
              mhz and all(near(m, 4000, 600) for m in mhz))
        # the intervals of a watch are contiguous (each starts at the
        # previous one's second reading), so together they span more than
        # 2^33 cycles only if the counter wrapped inside one of them
        span = sum(d['data']['endpoints'][0]['pcie_cycles'] for d in docs)
        check('wrap: the intervals span a wrap of the 33-bit counter '
              '(%d cycles)' % span, span > 2**33)
        tot = json_docs(step('wrap-totals')[1])[0]
        check('wrap: CNT_WIDTH 33 reported',
              tot['data']['config']['counter_width'] == 33)
    except (ValueError, KeyError, IndexError, ZeroDivisionError) as e:
        check('wrap JSON parses', False, '%r\n%s' % (e, out))

    rc_, out = step('csv')
    rows = [ln for ln in out.splitlines() if ln]
    check('CSV: a header and one row per bus', rc_ == 0 and len(rows) == 5 and
          ',' in rows[0] and all(r.count(',') == rows[0].count(',')
                                 for r in rows), out)
    rc_, out = step('prometheus')
    m = re.search(r'^ndk_pcie_telemetry_cycles_total\{[^}]*clock="pcie"[^}]*'
                  r'\} (\d+)$', out, re.M)
    check('Prometheus: PCIe cycles counter with labels', rc_ == 0 and m, out)
    check('Prometheus: HELP and TYPE for every family',
          len(re.findall(r'^# TYPE ', out, re.M)) ==
          len(re.findall(r'^# HELP ', out, re.M)) > 5, out)

    rc_, out = step('no-tree')
    check('card without a device tree: exit 5, says --bar/--offset',
          rc_ == 5 and '--bar' in out and '--offset' in out, out)
    rc_, out = step('no-tree-explicit')
    try:
        doc = json_docs(out)[0]
        check('card without a device tree: --bar 0 --offset 0 reads it',
              rc_ == 0 and doc['data']['config']['counter_width'] == 48, out)
    except (ValueError, KeyError, IndexError) as e:
        check('--bar/--offset JSON parses', False, '%r\n%s' % (e, out))
    rc_, out = step('conventional')
    check('card on a conventional PCI bus: exit 5, says why and --bar/--offset',
          rc_ == 5 and re.search(r'conventional', out) and '--bar' in out
          and len(out.strip().splitlines()) == 1, out)
    rc_, out = step('conventional-explicit')
    try:
        doc = json_docs(out)[0]
        check('card on a conventional PCI bus: --bar 0 --offset 0 reads it',
              rc_ == 0 and doc['data']['endpoints'][0]['pcie_cycles'] > 0,
              out)
    except (ValueError, KeyError, IndexError) as e:
        check('conventional card JSON parses', False, '%r\n%s' % (e, out))
    rc_, out = step('no-card')
    check('no matching card: exit 3, says what was searched',
          rc_ == 3 and re.search(r'8086:1234', out), out)
    rc_, out = step('bad-interval')
    check('negative interval: exit 2 (usage)', rc_ == 2, out)
    rc_, out = step('non-root')
    check('non-root: exit 4, says root is needed',
          rc_ == 4 and re.search(r'root|CAP_SYS_ADMIN', out), out)

    return report([('guest console', console.splitlines())])


if __name__ == '__main__':
    sys.exit(main())
