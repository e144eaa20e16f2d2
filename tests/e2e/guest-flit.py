#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A PCIe 6 flit-mode link in the 6.12 guest, judged by pciutils 3.15
# (scripts/pciutils.sh: Debian unstable's lspci and setpci, unmodified, on
# unstable's libraries, as /opt/pciutils first on the guest's PATH): a
# dwc-pcie-root-port and the card below it, both flit-mode=on at 64 GT/s,
# the card on pattern traffic. Checks:
#   - lspci --version and setpci --version say 3.15;
#   - lspci -vvv of both ends: FLIT Mode Supported, Speed 64GT/s,
#     LnkSta2 FltMode+, Physical Layer 64.0 GT/s with equalization done,
#     Flit Logging, 0x33 at the documented offsets (docs/flit.md);
#   - setpci: the Flit Counter of the port over about 3 s within the
#     closed form of the port's own RAS DES time in L0 read just before
#     and just after it (a bracket however slow the accesses), and that
#     bracket narrower than the SKP ordered sets' share;
#   - the DesignWare PMU (dwc_pcie_pmu, perf stat on its L0 event) over a
#     Flit Counter measurement: the same time within the edges of perf;
#   - a Flit->Ack measurement on the card through setpci: 31 flits of
#     72 ns (x16, 10 ns of flight), 9 counts of 8 ns each;
#   - after it, lspci shows the port's FBER measurement enabled and a
#     non-zero Flit Counter;
#   - pcie-telemetry --list names both ends' flit capabilities; --flit -j
#     over a second: the port's flits/s by the closed form, Flit->Ack as
#     above, and what setpci then reads raw of 0x33 equals the tool's
#     decode; the card's RQ payload (the NDK block's own count) fills the
#     share of the port's received flits that docs/flit.md's rule gives.
# Prints the checks as TAP and what lspci printed as comments. Exit 0 all
# passed, 1 not (also when scripts/pciutils.sh fails), 77 (skipped) only
# when the 6.12 kernel cannot be made here, as guest-dwc.py.
import re
import subprocess
import sys

from e2e_support import (Guest612, check, json_docs, lspci_devices,
                          pciutils_dir, pciutils_guest, report)

PORT_ID, CARD_ID = '1ded:8000', '1234:0d7b'
PATTERN = ('rq-frame-bytes=256,rq-gap=4,rq-stall=2,'
           'rc-frame-bytes=100,rc-gap=1')
QEMU_ARGS = [
    '-device', 'dwc-pcie-root-port,id=rp0,chassis=1,slot=1,x-speed=64,'
               'flit-mode=on',
    '-object', 'telemetry-traffic-pattern,id=t0,' + PATTERN,
    '-device', 'ndk-pcie-telemetry,bus=rp0,traffic=t0,link-speed=64,'
               'flit-mode=on',
]
# The model's places (docs/flit.md): port 0x300/0x320/0x360, card
# 0x200/0x220/0x260; the port's RAS DES at 0x200 (docs/dwc-root-port.md)
RP_LOG, RP_PERF, RP_RAS = 0x320, 0x360, 0x200
CARD_PERF = 0x260
# x16 at 64 GT/s: 748 flits, then a SKP ordered set; 12008 symbols a
# block, 8 symbols a ns
K, BLOCK_SYM, FLIT_SYM = 748, 748 * 16 + 40, 16
# Flit->Ack at x16 with 10 ns of flight: 2 + 2 * 10 + 50 ns
ACK_NS = 2 + 2 * 10 + 50

SP = 'setpci -d %s ' % PORT_ID
SC = 'setpci -d %s ' % CARD_ID
COMMANDS = [
    ('kernel', 'uname -r'),
    ('which-lspci', 'command -v lspci'),
    ('lspci-version', 'lspci --version'),
    ('setpci-version', 'setpci --version'),
    ('lspci-nn', 'lspci -nn'),
    ('lspci-vvv', 'lspci -vvv'),
    # FBER with Clear and the RAS DES time in L0, started in one run and
    # read in one: the accesses of a run are microseconds apart
    # The RAS DES time in L0 started, then FBER with Clear, then the time
    # read: the Flit Counter's span starts within that reading of the
    # other's start. At the end the time is read before and after the
    # Flit Counter: its span ends between the two (one setpci run each)
    ('flits-start', SP + '0x%x.l=0x03000001 0x%x.l=3 0x%x.l 0x%x.l'
     % (RP_RAS + 0x10, RP_LOG + 0x10, RP_RAS + 0x14, RP_RAS + 0x18)),
    # (3 s: the SKP ordered sets' share, 10 ms of flits, far above the
    # bracket's width of a few setpci accesses)
    ('sleep', 'sleep 3'),
    ('flits-end', SP + '0x%x.l 0x%x.l 0x%x.l 0x%x.l 0x%x.l 0x%x.l=0x03000000'
     % (RP_RAS + 0x14, RP_RAS + 0x18, RP_LOG + 0x14, RP_RAS + 0x14,
        RP_RAS + 0x18, RP_RAS + 0x10)),
    # the PMU over a second measurement
    ('insmod', 'insmod /lib/modules/dwc_pcie_pmu.ko'),
    ('perf-l0', 'pmu=$(ls /sys/bus/event_source/devices | '
     'grep dwc_rootport_); perf stat -a -x, -e "$pmu/L0/" -- sh -c "'
     + SP + '0x%x.l=3; sleep 1; ' % (RP_LOG + 0x10)
     + SP + '0x%x.l"' % (RP_LOG + 0x14)),
    # Flit->Ack on the card: disable, then enable with 31 instances
    ('ack', SC + '0x%x.l=0 0x%x.l=0x7c3; sleep 0.1; ' % (CARD_PERF + 8,
                                                         CARD_PERF + 8)
     + SC + '0x%x.l 0x%x.l=0' % (CARD_PERF + 0x0C, CARD_PERF + 8)),
    ('lspci-after', 'lspci -vvv -d %s' % PORT_ID),
    ('tool-list', 'pcie-telemetry --list'),
    ('tool-flit', 'pcie-telemetry -d 01:00.0 --flit -t 1 -j'),
    # 0x33 raw after the tool: capability, control, status, LTSSM 0-4
    ('setpci-perf-card', SC + ' '.join('0x%x.l' % (CARD_PERF + o)
                                       for o in range(4, 0x24, 4))),
    ('setpci-perf-port', SP + ' '.join('0x%x.l' % (RP_PERF + o)
                                       for o in range(4, 0x24, 4))),
    ('tool-block', 'pcie-telemetry -d 01:00.0 -t 1 -j'),
]
# The card's RQ frames carry 240 B of payload each (docs/dwc-root-port.md)
RQ_PAYLOAD = 240
KMOD_NOTE = re.compile(r'^lspci: Unable to load libkmod resources.*$', re.M)


def slots(l0_ns):
    """Flits in l0_ns of L0 at x16 (docs/flit.md)"""
    sym = l0_ns * 8
    return sym // BLOCK_SYM * K + min(K, sym % BLOCK_SYM // FLIT_SYM)


def hexes(text):
    return [int(x, 16) for x in re.findall(r'^([0-9a-f]{8})$', text, re.M)]


def main():
    g = Guest612()
    if g.skip:
        print(g.skip_line())
        return 77
    if g.error:
        check('guest-kernel-612.sh gives the 6.12 kernel, the module and '
              'perf', False, g.error)
        return report([])
    release = g.release
    try:
        d = pciutils_dir()
    except subprocess.CalledProcessError as e:
        check('scripts/pciutils.sh makes pciutils 3.15', False,
              'exit %d (its reason above, on stderr)' % e.returncode)
        return report([])
    notes = ['pciutils 3.15 from scripts/pciutils.sh: %s' % d]

    steps, console = pciutils_guest(COMMANDS, QEMU_ARGS, g.files,
                                    kernel=g.kernel, tool=True)

    def out(name):
        rc, text = steps.get(name, (None, ''))
        return rc, KMOD_NOTE.sub('', text)

    check('guest ran all commands to its end',
          re.search(r'^GUEST-EXIT 0', console, re.M), console[-3000:])
    check('guest kernel is %s' % release,
          out('kernel')[1].strip() == release, out('kernel')[1])
    check('lspci on the guest\'s PATH is /opt/pciutils/bin/lspci',
          out('which-lspci')[1].strip() == '/opt/pciutils/bin/lspci',
          out('which-lspci')[1])
    for prog in ('lspci', 'setpci'):
        rc, text = out(prog + '-version')
        notes.append('guest: %s --version: %s' % (prog, text.strip()))
        check('%s --version in the guest says 3.15 (%s)'
              % (prog, text.strip()),
              rc == 0 and re.match(r'%s version 3\.15(\.|$)' % prog,
                                   text.strip()), text)

    rc, nn = out('lspci-nn')
    port = re.findall(r'^(\S+) .*\[%s\]' % PORT_ID, nn, re.M)
    check('lspci -nn: the port [%s] and the card [%s] at 01:00.0'
          % (PORT_ID, CARD_ID),
          len(port) == 1 and re.search(r'^01:00\.0 .*\[%s\]' % CARD_ID, nn,
                                       re.M), nn)
    port = port[0] if port else '00:01.0'
    rc, vvv = out('lspci-vvv')
    devs = lspci_devices(vvv)
    for addr, what in ((port, 'the port'), ('01:00.0', 'the card')):
        notes.append('guest: lspci -vvv, %s:' % what)
        notes += ['  ' + ln for ln in devs.get(addr, [])]

    for addr, what, caps in ((port, 'port', (0x300, 0x320, 0x360)),
                             ('01:00.0', 'card', (0x200, 0x220, 0x260))):
        t = '\n'.join(devs.get(addr, []))
        check('lspci: the %s\'s Express capability says FLIT Mode Supported'
              % what, re.search(r'Express \(v2\) .*FLIT Mode Supported', t),
              t)
        check('lspci: the %s\'s LnkSta: Speed 64GT/s, Width x16' % what,
              re.search(r'LnkSta:\s+Speed 64GT/s, Width x16', t), t)
        check('lspci: the %s\'s LnkSta2 FltMode+' % what,
              re.search(r'LnkSta2:.*FltMode\+', t, re.S), t)
        check('lspci: the %s\'s LnkCtl FltModeDis-' % what,
              re.search(r'FltModeDis-', t), t)
        check('lspci: the %s has [%x v1] Physical Layer 64.0 GT/s with '
              'equalization complete, phases 1 to 3' % (what, caps[0]),
              re.search(r'Capabilities: \[%x v1\] Physical Layer 64\.0 GT/s'
                        r'\s+Phy64Sta: EquComplete\+ EquPhase1\+ EquPhase2\+'
                        r' EquPhase3\+' % caps[0], t), t)
        check('lspci: the %s has [%x v1] Flit Logging, no error logged, '
              'FBER measurement off' % (what, caps[1]),
              re.search(r'Capabilities: \[%x v1\] Flit Logging\s+Log1:\s+'
                        r'Valid-, Link Width: x1' % caps[1], t) and
              re.search(r'MeasCtl:\s+En- ', t), t)
        check('lspci: the %s has [%x v1] Extended Capability ID 0x33'
              % (what, caps[2]),
              re.search(r'Capabilities: \[%x v1\] Extended Capability ID '
                        r'0x33' % caps[2], t), t)

    # The Flit Counter against the RAS DES time in L0 of the same span
    rc0, t0 = out('flits-start')
    rc, text = out('flits-end')
    v0, v = hexes(t0), hexes(text)
    check('setpci read the RAS DES data, then the Flit Counter between two '
          'readings (%s; %s)' % (' '.join('%08x' % x for x in v0),
                                 ' '.join('%08x' % x for x in v)),
          rc0 == 0 and rc == 0 and len(v0) == 2 and len(v) == 5,
          t0 + text)
    if len(v0) == 2 and len(v) == 5:
        lead = v0[0] | v0[1] << 32
        before, flits, after = v[0] | v[1] << 32, v[2], v[3] | v[4] << 32
        # the counter's L0 time lies in [before - lead, after]; +-3 flits
        # for where the SKP ordered sets fall in a span
        lo, hi = slots(max(before - lead, 0)) - 3, slots(after) + 3
        notes.append('Flit Counter %d over %d to %d ns of L0 (%.1f M '
                     'flits/s)' % (flits, before - lead, after,
                                   flits / max(after, 1) * 1e3))
        check('the port\'s Flit Counter (%d) lies within the closed form of '
              'its RAS DES time in L0 read around it (%d to %d flits)'
              % (flits, lo, hi), before > 5e8 and lo <= flits <= hi, text)
        # the SKP ordered sets alone are 0.33 % of the flit slots: over a
        # narrower bracket a count without them fails
        check('that bracket (%d flits) is narrower than the SKP ordered '
              'sets\' share of the span (%d flits)'
              % (hi - lo, (after - slots(after) * 2) * 8 // 16),
              hi - lo < (after - slots(after) * 2) * 8 // 16, text)

    # The DesignWare PMU's L0 over a Flit Counter measurement
    rc, text = out('insmod')
    check('insmod dwc_pcie_pmu.ko', rc == 0, text)
    rc, text = out('perf-l0')
    m = re.search(r'^(\d+),[^,]*,dwc_rootport_\w+/L0/', text, re.M)
    v = hexes(text)
    check('perf stat on dwc_rootport_*/L0/ counted over the measurement',
          rc == 0 and m and len(v) == 1, text)
    if m and len(v) == 1:
        l0, flits = int(m.group(1)), v[0]
        notes.append('perf: L0 %d ns over a Flit Counter of %d' % (l0, flits))
        # perf's span holds the measurement's plus two setpci starts
        # (0.1 s here, more on a loaded host): the Flit Counter stays
        # below the PMU's L0 by the closed form, and above half of it; the
        # RAS DES check above is the close one
        check('the PMU\'s time in L0 (%d ns, %d flits by the closed form) '
              'holds the Flit Counter\'s %d flits (%.1f %%)'
              % (l0, slots(l0), flits, 100.0 * flits / max(slots(l0), 1)),
              flits <= slots(l0) and flits >= 0.5 * slots(l0), text)

    # Flit->Ack on the card: 31 instances summed
    rc, text = out('ack')
    v = hexes(text)
    want = 2 | 31 << 2 | (31 * ((ACK_NS + 7) // 8)) << 8
    check('Flit->Ack on the card over 31 flits: done, 31 tracked, %d ns '
          '(status %08x, read %s)' % (31 * 8 * ((ACK_NS + 7) // 8), want,
                                      ' '.join('%08x' % x for x in v)),
          rc == 0 and v == [want], text)

    rc, text = out('lspci-after')
    m = re.search(r'MeasSts1:\s+Flit Counter: (\d+)', text)
    check('lspci after the measurements: the port\'s FBER measurement on '
          'and its Flit Counter above 0 (%s)' % (m.group(1) if m else '?'),
          re.search(r'MeasCtl:\s+En\+', text) and m and int(m.group(1)) > 0,
          text)
    check_tool(out, port, notes)
    return report([('guest console', console.splitlines())], notes)


def check_tool(out, port, notes):
    rc, text = out('tool-list')
    check('pcie-telemetry --list names the flit capabilities of the card '
          'and the port %s' % port,
          rc == 0 and re.search(r'flit card 0000:01:00\.0: supported, active; '
                                r'0x0031 at 0x200, 0x0032 at 0x220, 0x0033 '
                                r'at 0x260', text) and
          re.search(r'flit port 0000:%s: supported, active; 0x0031 at '
                    r'0x300, 0x0032 at 0x320, 0x0033 at 0x360'
                    % re.escape(port), text), text)
    rc, text = out('tool-flit')
    docs = json_docs(text)
    ends = {}
    try:
        for e in docs[0]['flit']:
            ends[e['role']] = e
        card, rp = ends['card'], ends['port']
        lat = card['perf']['latency']
        rate = rp['log']['fber']['flits_per_second']
    except (IndexError, KeyError, TypeError) as e:
        check('pcie-telemetry --flit -j gives the card and the port', False,
              repr(e) + text[-2000:])
        return
    check('pcie-telemetry --flit -j: both ends in flit mode at 64 GT/s x16',
          rc == 0 and card['flit_mode'] and rp['flit_mode'] and
          card['link'] == {'speed': '64 GT/s', 'width': 16}, text[-2000:])
    want = slots(10 ** 9)
    notes.append('tool: the port receives %.6g flits/s (closed form %d)'
                 % (rate, want))
    check('the tool\'s port flits/s %.6g within 0.5 %% of the closed form '
          '%d at x16' % (rate, want), abs(rate - want) <= 0.005 * want)
    check('the tool\'s Flit->Ack on the card: done, 31 tracked, %d ns '
          'average %s' % (lat.get('counter_ns') or 0, lat.get('average_ns')),
          lat['status'] == 'done' and lat['tracked'] == 31 and
          lat['counter'] == 31 * ((ACK_NS + 7) // 8) and
          abs(lat['average_ns'] - 8 * ((ACK_NS + 7) // 8)) < 1e-6, str(lat))
    for name, end, key in (('card', card, 'setpci-perf-card'),
                           ('port', rp, 'setpci-perf-port')):
        rc, raw = out(key)
        v = hexes(raw)
        if len(v) != 8:
            check('setpci read 0x33 of the %s' % name, False, raw)
            continue
        perf = end['perf']
        st = v[2]
        states = ['not started', 'started', 'done', 'overflow']
        ok = (perf['ltssm_registers'] == (v[0] >> 10 & 7) and
              perf['interrupt_vector'] == (v[0] & 0x3FF) and
              perf['control'] == v[1] and
              perf['latency']['status'] == states[st & 3] and
              perf['latency']['tracked'] == (st >> 2 & 31) and
              perf['latency']['counter'] == (st >> 8 & 0xFFFF))
        for i, reg in enumerate(perf['ltssm']):
            ok = ok and reg['tracked'] == (v[3 + i] >> 2 & 31) and \
                reg['counter'] == (v[3 + i] >> 8 & 0xFFFF)
        check('setpci\'s raw 0x33 of the %s (%s) equals the tool\'s '
              'decode' % (name, ' '.join('%08x' % x for x in v[:3])), ok,
              '%s\n%s' % (raw, perf))

    # the NDK block's RQ payload as a share of the port's flits
    rc, text = out('tool-block')
    try:
        d = json_docs(text)[0]
        rq = d['data']['endpoints'][0]['buses']['PTC -> PCIe (RQ)']
        frames_s = rq['transactions'] / d['seconds']
    except (IndexError, KeyError, TypeError, ZeroDivisionError) as e:
        check('pcie-telemetry -j gives the block\'s RQ bus', False,
              repr(e) + text[-2000:])
        return
    share = frames_s * RQ_PAYLOAD / 236 / rate
    want_share = 40e6 * RQ_PAYLOAD / 236 / want
    notes.append('block: %.6g RQ frames/s: %.4f of the port\'s flits carry '
                 'their payload' % (frames_s, share))
    check('the block\'s RQ payload fills %.4f of the port\'s received '
          'flits (docs/flit.md: payload / 236 per flit; the pattern gives '
          '%.4f)' % (share, want_share),
          abs(share - want_share) <= 0.02 * want_share)


if __name__ == '__main__':
    sys.exit(main())
