#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# End to end, both ends of a card's link: boot the 6.12 guest of
# scripts/guest-kernel-612.sh with a dwc-pcie-root-port and the card below
# it on pattern traffic, load Linux's DesignWare PCIe PMU driver, and check
# (guest side: guest/e2e-dwc.sh)
#   - that the driver registers dwc_rootport_<id> for the port, the id
#     worked out here from the port's address as the driver does;
#   - that perf stat -a counts on its Rx and Tx TLP payload events what the
#     pattern's closed form gives over the time perf counted;
#   - that pcie-telemetry --port shows both ends, the port's payload
#     agreeing with the closed form and with the block's own RQ and RC
#     counts, in text and JSON, once and in a watch; --list shows the PMU;
#     without the driver --port says so (exit 12).
# The expected rates are worked out by hand from the frame shapes (docs/
# ndk-pcie-telemetry.md, "pattern"; docs/dwc-root-port.md for what the
# port counts), not taken from the tool. Prints the checks as TAP and what
# perf and the tool printed as comments; exit 0 if all passed, 1 if not,
# 77 (skipped) only when the 6.12 kernel cannot be made here.
import os
import re
import subprocess
import sys
import tempfile

from e2e_support import (REPO, Guest612, check, guest_steps, json_docs,
                          report, tool_initrd)


# The card's PCIe clock is 400 MHz (the default); its buses move words of
# 2 regions of 32 B. A period is stall + words + gap cycles.
#   RQ 256 B: 4 words, stall 2, gap 4: one frame every 10 cycles, 40 M/s
#   RC 100 B: 25 items of 4 B, 4 regions = 2 words, gap 1: every 3 cycles
PATTERN = ('rq-frame-bytes=256,rq-gap=4,rq-stall=2,'
           'rc-frame-bytes=100,rc-gap=1')
CLOCK = 400e6
RQ_FRAME, RQ_PERIOD = 256, 10
RC_FRAME, RC_PERIOD = 100, 3
# What the port counts of a frame (docs/dwc-root-port.md): RQ frames are
# requests with a 16-byte header, RC frames completions with 12 bytes;
# payload in whole 4-byte items
RQ_PAYLOAD = (RQ_FRAME + 3) // 4 * 4 - 16          # 240 B
RC_PAYLOAD = (RC_FRAME + 3) // 4 * 4 - 12          # 88 B
RX_RATE = CLOCK / RQ_PERIOD * RQ_PAYLOAD           # 9.6e9 B/s card -> port
TX_RATE = CLOCK / RC_PERIOD * RC_PAYLOAD           # 11.73e9 B/s port -> card
RATE = {'rx': RX_RATE, 'tx': TX_RATE}
FRAME_PAYLOAD = {'rx': RQ_PAYLOAD, 'tx': RC_PAYLOAD}

# Tolerances. Over the time perf says it counted, the count misses or
# gains only the edges: the driver's configuration writes a little off the
# kernel's time stamps (and the 16-byte unit, a frame in flight). That is
# tens of microseconds of traffic on an idle host; a QEMU thread
# descheduled between the two on a busy one adds its pause: 10 ms. Against
# "seconds time elapsed" of plain perf stat the counting starts and ends
# some milliseconds apart from the workload's clock: 30 ms. The shares of
# an interval each direction of --port both gets: 10 % either way; the
# port's and the card's rates: 1 %.
EDGE_S = 0.010
ELAPSED_EDGE_S = 0.030
SHARE_TOL = 0.10
AGREE_TOL = 0.01
SHARED_TOL = 0.03

QEMU_ARGS = [
    '-device', 'dwc-pcie-root-port,id=rp0,chassis=1,slot=1',
    '-object', 'telemetry-traffic-pattern,id=t0,' + PATTERN,
    '-device', 'ndk-pcie-telemetry,bus=rp0,traffic=t0',
]


def dwc_name(addr):
    """dwc_rootport_<id>: the driver's (domain << 16) | (bus << 8) | devfn,
    32 bits, in hex."""
    dom, bus, df = addr.split(':')
    dev, fn = df.split('.')
    sbdf = ((int(dom, 16) << 16) | (int(bus, 16) << 8) |
            (int(dev, 16) << 3) | int(fn, 16)) & 0xffffffff
    return 'dwc_rootport_%x' % sbdf


def within(count, direction, seconds, edge_s):
    """count against the closed form over seconds; (ok, text)."""
    want = RATE[direction] * seconds
    tol = RATE[direction] * edge_s + FRAME_PAYLOAD[direction] + 16
    return (abs(count - want) <= tol,
            '%d, expected %.0f +- %.0f over %.6f s (off by %.0f B = %.1f us '
            'of traffic)' % (count, want, tol, seconds, count - want,
                             (count - want) / RATE[direction] * 1e6))


def perf_plain(out):
    """(count, event, elapsed) from perf stat's default output."""
    m = re.search(r'^\s*([\d,.]+)\s+(\S+/\S+/)\s*$', out, re.M)
    e = re.search(r'^\s*([\d.]+) seconds time elapsed', out, re.M)
    if not m or not e:
        return None
    return int(m.group(1).replace(',', '').replace('.', '')), m.group(2), \
        float(e.group(1))


def perf_csv(out):
    """(count, event, run time in s, percentage) from perf stat -x,."""
    for line in out.splitlines():
        f = line.split(',')
        if len(f) >= 5 and f[0].isdigit():
            return int(f[0]), f[2], int(f[3]) / 1e9, float(f[4])
    return None


def check_port_doc(name, doc, port_addr, pmu, directions):
    """One document of pcie-telemetry --port: the port's counts against
    the closed form, and against the block's own RQ/RC counts."""
    try:
        p = doc['port']
        secs = doc['seconds']
        ep = doc['data']['endpoints'][0]
        bus = {'rx': ep['buses']['PTC -> PCIe (RQ)'],
               'tx': ep['buses']['PCIe -> PTC (RC)']}
    except (KeyError, IndexError, TypeError) as e:
        check('%s: JSON has the port and the card' % name, False, repr(e))
        return
    check('%s: port %s, PMU %s, card 0000:01:00.0 endpoint 0' %
          (name, port_addr, pmu),
          (p['device'], p['pmu'], p['card'], p['endpoint']) ==
          (port_addr, pmu, '0000:01:00.0', 0), str(p))
    for d in ('rx', 'tx'):
        c = p[d]
        if d not in directions:
            check('%s: %s not counted (null)' % (name, d), c is None, str(c))
            continue
        if c is None:
            check('%s: %s counted' % (name, d), False, str(p))
            continue
        share = c['seconds'] / secs
        want_share = 1.0 / len(directions)
        check('%s: %s counted %.3f s of the %.3f s interval (%.0f %%)' %
              (name, d, c['seconds'], secs, 100 * share),
              c['enabled_seconds'] >= c['seconds'] > 0 and
              abs(share - want_share) <= SHARE_TOL, str(c))
        ok, text = within(c['value'], d, c['seconds'], EDGE_S)
        check('%s: port %s payload equals the closed form: %s' %
              (name, d, text), ok)
        # the card's own count of frames on the bus, at the port's rate
        frames_s = bus[d]['transactions'] / secs
        card_rate = frames_s * FRAME_PAYLOAD[d]
        port_rate = c['value'] / c['seconds']
        check('%s: both ends agree on %s: port %.4g B/s, card %.0f frames/s '
              'x %d B = %.4g B/s' % (name, d, port_rate, frames_s,
                                     FRAME_PAYLOAD[d], card_rate),
              abs(port_rate - card_rate) <= card_rate * AGREE_TOL +
              (FRAME_PAYLOAD[d] + 16) / c['seconds'])


def main():
    g = Guest612()
    if g.skip:
        print(g.skip_line())
        return 77
    if g.error:
        check('guest-kernel-612.sh gives the kernel, the module and perf',
              False, g.error)
        return report([])
    kernel, release = g.kernel, g.release

    with tempfile.TemporaryDirectory() as tmp:
        initrd = os.path.join(tmp, 'initrd.gz')
        tool_initrd(initrd, 'guest/e2e-dwc.sh', g.files)
        env = dict(os.environ, GUEST_KERNEL=kernel, GUEST_TIMEOUT='240')
        p = subprocess.run([os.path.join(REPO, 'scripts/guest-run.sh'),
                            initrd] + QEMU_ARGS, capture_output=True,
                           text=True, errors='replace', env=env)
    console = (p.stdout + p.stderr).replace('\r', '')
    steps = guest_steps(console)
    notes = []

    def step(name):
        return steps.get(name, (None, ''))

    def val(key):
        m = re.search(r'^=== %s ?(.*)$' % key, console, re.M)
        return m.group(1) if m else None

    check('guest ran all steps to its end',
          re.search(r'^GUEST-EXIT 0', console, re.M), console[-3000:])
    check('guest kernel is %s' % release, val('KERNEL') == release,
          val('KERNEL'))
    ports = re.findall(r'^=== PCI (\S+) 0x1ded 0x8000 0x0604', console, re.M)
    check('the dwc-pcie-root-port is on the bus (1ded:8000, a bridge)',
          len(ports) == 1, console[:2000])
    port_addr = ports[0] if ports else '?'
    pmu = dwc_name(port_addr) if ports else '?'
    check('insmod dwc_pcie_pmu.ko succeeded', step('insmod')[0] == 0,
          step('insmod')[1])

    # (a) the PMU
    check('(a) the driver registers %s for %s' % (pmu, port_addr),
          pmu in (val('EVENT-SOURCES') or '').split() and val('PMU') == pmu,
          'event sources: %s; PMU: %s' % (val('EVENT-SOURCES'), val('PMU')))
    rc_, files = step('pmu-files')
    notes += ['%s: %s' % (pmu, ln) for ln in files.splitlines()]
    m = re.search(r'^type: (\d+)$', files, re.M)
    pmu_type = m.group(1) if m else '?'
    check('(a) %s: events/Rx_PCIe_TLP_Data_Payload and Tx_... as the driver '
          'describes them' % pmu,
          'events/Rx_PCIe_TLP_Data_Payload: eventid=0x21,type=0x0' in files
          and 'events/Tx_PCIe_TLP_Data_Payload: eventid=0x20,type=0x0'
          in files and re.search(r'^cpumask: \d', files, re.M), files)

    # (b) perf stat on the port's payload events
    for d, ev in (('rx', 'Rx_PCIe_TLP_Data_Payload'),
                  ('tx', 'Tx_PCIe_TLP_Data_Payload')):
        rc_, out = step('perf-' + d)
        notes.append('perf stat -a -e %s/%s/ sleep 1 printed:' % (pmu, ev))
        notes += ['  ' + ln for ln in out.splitlines()]
        got = perf_plain(out)
        if rc_ != 0 or not got:
            check('(b) perf stat -a -e %s/%s/ sleep 1 runs' % (pmu, ev), False,
                  out)
        else:
            count, event, elapsed = got
            ok, text = within(count, d, elapsed, ELAPSED_EDGE_S)
            check('(b) perf stat %s/%s/ (elapsed %.3f s): %s' %
                  (pmu, ev, elapsed, text),
                  ok and event == '%s/%s/' % (pmu, ev), out)
            check('(b) perf stat %s: a multiple of the 16-byte unit' % ev,
                  count % 16 == 0, str(count))
        rc_, out = step('perf-%s-x' % d)
        notes.append('perf stat -a -x, -e %s/%s/ sleep 1 printed:' % (pmu, ev))
        notes += ['  ' + ln for ln in out.splitlines()]
        got = perf_csv(out)
        if rc_ != 0 or not got:
            check('(b) perf stat -x, %s/%s/ runs' % (pmu, ev), False, out)
        else:
            count, event, run_s, pct = got
            ok, text = within(count, d, run_s, EDGE_S)
            check('(b) perf stat -x, %s over the %.6f s it counted: %s'
                  % (ev, run_s, text), ok and pct == 100.0, out)
            check('(b) perf stat -x, %s: a multiple of the 16-byte unit' % ev,
                  count % 16 == 0, str(count))

    # (c) the tool
    rc_, out = step('list')
    check('--list shows the PMU above the card',
          rc_ == 0 and re.search(r'^0000:01:00\.0 .*\n(    .*\n)*    port %s  '
                                 r'PMU %s \(type %s, cpu \d+\)$'
                                 % (re.escape(port_addr), pmu, pmu_type),
                                 out, re.M), out)
    for name, directions in (('tool-both-json', ('rx', 'tx')),
                             ('tool-rx-json', ('rx',)),
                             ('tool-tx-json', ('tx',))):
        rc_, out = step(name)
        try:
            docs = json_docs(out)
            check('%s: exit 0, one document' % name,
                  rc_ == 0 and len(docs) == 1, out[-2000:])
            check_port_doc(name, docs[0], port_addr, pmu, directions)
        except ValueError as e:
            check('%s: JSON parses' % name, False, '%r\n%s' % (e, out))

    rc_, out = step('tool-both-text')
    i = out.find('\nRoot port ')
    notes.append('pcie-telemetry -d 01:00.0 --port both -t 1 printed '
                 '(its last lines):')
    notes += ['  ' + ln for ln in out[i + 1:].splitlines()] if i >= 0 else \
        ['  ' + ln for ln in out.splitlines()[-8:]]
    check('tool-both-text: exit 0, the two-ended section after the report',
          rc_ == 0 and 'Root port %s (%s) above 0000:01:00.0, PCIe endpoint 0'
          % (port_addr, pmu) in out, out)
    for d, row, bus in (('rx', r'card -> port \(Rx\)', r'PTC -> PCIe \(RQ\)'),
                        ('tx', r'port -> card \(Tx\)', r'PCIe -> PTC \(RC\)')):
        m = re.search(r'^%s\s+%s\s+([\d.]+)\s+(\S+)\s+(\d+)\s+([\d.]+)\s+'
                      r'([\d.]+)$' % (row, bus), out, re.M)
        if not m:
            check('tool-both-text: %s row' % d, False, out)
            continue
        card_gbps, port_gbps = float(m.group(1)), float(m.group(5))
        frame = RQ_FRAME if d == 'rx' else RC_FRAME
        period = RQ_PERIOD if d == 'rx' else RC_PERIOD
        want_card = CLOCK / period * frame * 8 / 1e9
        want_port = RATE[d] * 8 / 1e9
        check('tool-both-text: %s card %.2f Gbps (%.2f), port %.2f Gbps '
              '(%.2f)' % (d, card_gbps, want_card, port_gbps, want_port),
              abs(card_gbps - want_card) <= want_card * 0.01 + 0.01 and
              abs(port_gbps - want_port) <= want_port * 0.01 + 0.01 and
              m.group(2).lower() == '%s_pcie_tlp_data_payload' % d, m.group(0))

    rc_, out = step('tool-watch')
    try:
        docs = json_docs(out)
        check('tool-watch: runs until interrupted, exit 0 (%d intervals)'
              % len(docs), rc_ == 0 and len(docs) >= 3, out[-1000:])
        for k, doc in enumerate(docs):
            check_port_doc('tool-watch interval %d' % (k + 1), doc,
                           port_addr, pmu, ('rx', 'tx'))
    except ValueError as e:
        check('tool-watch: JSON parses', False, '%r\n%s' % (e, out))

    # the counter shared with perf stat: each counts part of the time, at
    # the right rate over the time it ran but for what each of the
    # kernel's switches between the two (every few ms) loses at its edges:
    # SHARED_TOL. perf stat -x, prints the count scaled to the time enabled
    # (count x enabled / running), its run time and running / enabled.
    rc_, out = step('shared-tool')
    rc2, pout = step('shared-perf')
    notes.append('perf stat -a -x, -e %s/Rx_PCIe_TLP_Data_Payload/ sleep 3 '
                 'beside pcie-telemetry --port rx printed:' % pmu)
    notes += ['  ' + ln for ln in pout.splitlines()]
    try:
        rx = json_docs(out)[0]['port']['rx']
        share = rx['seconds'] / rx['enabled_seconds']
        check('shared counter: the tool\'s rx ran %.0f %% of the %.3f s it '
              'was enabled' % (100 * share, rx['enabled_seconds']),
              rc_ == 0 and 0.1 < share < 0.9, out[-1500:])
        ok, text = within(rx['value'], 'rx', rx['seconds'],
                          EDGE_S + SHARED_TOL * rx['seconds'])
        check('shared counter: the tool\'s rx over the time it ran: %s'
              % text, ok)
    except (ValueError, KeyError, IndexError, TypeError,
            ZeroDivisionError) as e:
        check('shared counter: the tool\'s JSON', False, '%r\n%s' % (e, out))
    got = perf_csv(pout)
    if not got:
        check('shared counter: perf stat -x, runs', False, pout)
    else:
        count, event, run_s, pct = got
        raw = round(count * pct / 100)
        ok, text = within(raw, 'rx', run_s, EDGE_S + SHARED_TOL * run_s)
        check('shared counter: perf stat ran %.2f %% of the time; its count '
              'unscaled over the %.3f s it ran: %s' % (pct, run_s, text),
              pct < 95 and ok, pout)

    rc_, out = step('no-pmu')
    check('without the driver: exit 12, "no DesignWare PMU above '
          '0000:01:00.0 (is dwc_pcie_pmu loaded? ..."',
          rc_ == 12 and out.startswith(
              'pcie-telemetry: no DesignWare PMU above 0000:01:00.0 (is '
              'dwc_pcie_pmu loaded? is the port a RAS DES root port?') and
          len(out.strip().splitlines()) == 1, out)
    return report([('guest console', console.splitlines())], notes)


if __name__ == '__main__':
    sys.exit(main())
