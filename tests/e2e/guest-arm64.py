#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The card on arm64: Debian's 6.12 arm64 kernel on QEMU's `-M virt`
# (build/qemu-system-aarch64 of scripts/setup.sh --arm64; the kernel, the
# cross-built modules and tool, busybox and perf of scripts/guest-arm64.sh),
# with
#   00:08.0  hisi-ptt, covering the port at 00:10.0 only
#   00:10.0  dwc-pcie-root-port, and below it at 01:00.0 a card with a
#            slow pattern (a 240 B write up and a 52 B completion down
#            every 100 us: a trace perf can print whole)
#   00:11.0  pcie-root-port, and below it at 02:00.0 the pattern card of
#            pattern_card.py
# Checks:
#   - the guest is aarch64, the tool in it an arm64 binary that runs;
#   - with no firmware to enable them, the cards' memory decoding is off:
#     the tool says so and how to turn it on (sysfs enable), which works;
#   - the tool's report of the pattern card equals its closed form;
#   - the unmodified hisi_ptt binds the PTT without any numa_node step
#     (a device without a node gets every CPU on arm64), with an MSI;
#   - perf record of the PTT event (each direction, 8DW, the card's
#     requester filter) under perf stat of the DesignWare PMU's payload
#     event of the same direction, beside the tool's read of the NDK
#     block: perf report -D decodes the trace (its "Header DW0" and "Time"
#     fields summed in the guest); its records by TLP type are the
#     pattern's frames at the block's rate within 1 %, the PMU's payload
#     is that rate times the frame's payload within 1 %, and the tool's
#     decode of the same perf.data (--ptt-input) gives the same counts;
#   - perf stat of the PMU's LTSSM event L0 counts the time it ran;
#   - the tool traces natively (--ptt in) and reads the port (--port).
# Prints the checks as TAP; exit 0 all passed, 1 not, 77 (skipped) only
# when scripts/guest-arm64.sh cannot make the guest here.
import re
import sys

from e2e_support import Arm64Guest, check, guest_commands, json_docs, report
from pattern_card import PATTERN, check_pattern

# RQ 256 B (4 words) and RC 64 B (1 word) every 40000 cycles of 400 MHz
SLOW = ('rq-frame-bytes=256,rq-gap=39996,rq-stall=0,'
        'rc-frame-bytes=64,rc-gap=39999,rc-stall=0')
FRAMES_S = 400e6 / 40000
RQ_PAYLOAD, RC_PAYLOAD = 256 - 16, 64 - 12
RATE_TOL = 0.01
QEMU_ARGS = [
    # DEVICE_RANGE: the BDF of 00:10.0 alone
    '-device', 'hisi-ptt,addr=08.0,sicl-id=2,core-id=1,'
    'range-lower=0x80,range-upper=0x80',
    '-device', 'dwc-pcie-root-port,id=rp0,chassis=1,slot=1,addr=10.0',
    '-object', 'telemetry-traffic-pattern,id=t0,' + SLOW,
    '-device', 'ndk-pcie-telemetry,bus=rp0,traffic=t0',
    '-device', 'pcie-root-port,id=rp1,chassis=1,slot=2,addr=11.0',
    '-object', 'telemetry-traffic-pattern,id=t1,' + PATTERN,
    '-device', 'ndk-pcie-telemetry,bus=rp1,traffic=t1',
]
PMU = 'hisi_ptt2_1'
# perf report -D of a hisi_ptt trace prints each field of a record as
# ".  <offset>: b0 b1 b2 b3   <name>", the bytes as they lie in memory
# (each DW little endian): the TLP's Fmt and Type are in b3 of "Header
# DW0". Summed here in the guest: records by that byte, the first and last
# "Time", and the bytes of the AUX data perf announces.
SUMMARY = ('awk \'/Header DW0$/ {n++; t[$6]++} '
           '/ Time$/ {v = $6 $5 $4 $3; if (f == "") f = v; l = v} '
           '/HISI PTT data: size/ {for (i = 1; i < NF; i++) '
           'if ($i == "size") b += $(i + 1)} '
           'END {printf "records %d bytes %d first %s last %s\\n", n, b, '
           'f, l; for (k in t) printf "byte3 %s %d\\n", k, t[k]}\'')
# the 8DW direction codes: 1 outbound, 2 inbound (docs/ptt.md)
DIRS = {'in': ('Rx', 2), 'out': ('Tx', 1)}
COMMANDS = [
    ('arch', 'uname -m; uname -r'),
    ('tool-elf', 'head -c 20 /usr/bin/pcie-telemetry | od -An -tx1'),
    ('version', 'pcie-telemetry --version'),
    ('list', 'pcie-telemetry --list'),
    # no firmware has enabled the cards' memory decoding (docs/arm64.md)
    ('decoding-off', 'pcie-telemetry -d 02:00.0 -t 0.1'),
    ('enable', 'for d in 0000:01:00.0 0000:02:00.0; do '
     'echo 1 > /sys/bus/pci/devices/$d/enable || exit 1; done'),
    ('pattern-json', 'pcie-telemetry -d 02:00.0 -t 1 -j'),
    ('insmod', 'insmod /lib/modules/hisi_ptt.ko && '
     'insmod /lib/modules/dwc_pcie_pmu.ko'),
    ('pmus', 'ls /sys/bus/event_source/devices'),
    ('cpumask', 'cat /sys/bus/event_source/devices/%s/cpumask' % PMU),
    ('irq', 'grep hisi_ptt /proc/interrupts'),
    ('perf-version', 'perf --version'),
]
for d, (key, code) in DIRS.items():
    COMMANDS.append((
        'record-%s' % d,
        'pmu=$(ls /sys/bus/event_source/devices | grep dwc_rootport_); '
        'pcie-telemetry -d 01:00.0 -t 1 -j > /tmp/block.json & '
        'perf stat -a -x, -o /tmp/stat.txt '
        '-e "$pmu/%s_PCIe_TLP_Data_Payload/" -- '
        'perf record -q -o /tmp/%s.data '
        '-e %s/filter=0x00100,direction=%d,type=7,format=1/ -C 0 -- sleep 1;'
        ' rc=$?; wait; '
        'echo "=== BLOCK"; cat /tmp/block.json; '
        'echo "=== STAT"; cat /tmp/stat.txt; '
        'echo "=== REPORT"; perf report -D -i /tmp/%s.data | %s; '
        'echo "=== TOOL"; pcie-telemetry --ptt %s --ptt-input /tmp/%s.data -j;'
        ' exit $rc' % (key, d, PMU, code, d, SUMMARY, d, d)))
COMMANDS += [
    # an LTSSM event: the link stays in L0, so its ns are perf's own
    ('perf-l0', 'pmu=$(ls /sys/bus/event_source/devices | grep '
     'dwc_rootport_); perf stat -a -x, -e "$pmu/L0/" sleep 1'),
    ('tool-ptt', 'pcie-telemetry -d 01:00.0 --ptt in --ptt-format 8dw '
     '-t 1 -j'),
    ('tool-port', 'pcie-telemetry -d 01:00.0 --port both -t 1 -j'),
    ('dmesg', 'dmesg | grep -i "hisi_ptt\\|dwc\\|BUG\\|WARNING"'),
]


def kind_of(byte3):
    """The TLP kind of the top byte of a header DW0: Fmt [7:5], Type [4:0]
    (PCIe base spec), as far as this card's traffic goes."""
    fmt, typ = byte3 >> 5, byte3 & 0x1f
    if typ == 0:
        return 'MWr' if fmt & 2 else 'MRd'
    if typ == 0x0a:
        return 'CplD' if fmt & 2 else 'Cpl'
    return 'other %02x' % byte3


def main():
    g = Arm64Guest()
    if g.skip:
        print(g.skip_line())
        return 77
    if g.error:
        check('the arm64 guest\'s parts are there', False, g.error)
        return report([])
    steps, console = guest_commands(COMMANDS, QEMU_ARGS, arm64=g,
                                    timeout=600)

    def out(name):
        return steps.get(name, (None, ''))

    check('guest ran all commands to its end',
          re.search(r'^GUEST-EXIT 0', console, re.M), console[-3000:])
    text = out('arch')[1].split()
    check('the guest is aarch64, kernel %s' % g.release,
          text[:2] == ['aarch64', g.release], out('arch')[1])
    # ELF: class 2 (64-bit) at 4, machine 0xb7 (AArch64) at 18
    elf = out('tool-elf')[1].split()
    check('pcie-telemetry in the guest is an AArch64 ELF',
          elf[:4] == ['7f', '45', '4c', '46'] and elf[4] == '02' and
          elf[18:20] == ['b7', '00'], out('tool-elf')[1])
    check('pcie-telemetry --version runs',
          out('version')[0] == 0 and re.search(r'\d+\.\d+\.\d+',
                                               out('version')[1]),
          out('version')[1])
    rc, text = out('list')
    check('--list shows both cards',
          rc == 0 and '0000:01:00.0' in text and '0000:02:00.0' in text,
          text)
    rc, text = out('decoding-off')
    check('before the cards are enabled the tool says why it cannot read '
          'them (exit 7)', rc == 7 and re.search(
              r'^pcie-telemetry: 0000:02:00\.0 does not decode its BARs .*'
              r'as root: echo 1 > /sys/bus/pci/devices/0000:02:00\.0/enable$',
              text, re.M), text)
    check('sysfs enable turns the cards on', out('enable')[0] == 0,
          out('enable')[1])
    rc, text = out('pattern-json')
    try:
        doc = json_docs(text)[0]
        bad = check_pattern(doc)
        check('pattern card: every channel equals its closed form within '
              'one drain window', rc == 0 and not bad, '\n'.join(bad))
        st = doc['data']['status']
        check('pattern card: no flags', st == dict(
            busy=False, lost_deltas=False, readout_overrun=False), str(st))
    except (ValueError, KeyError, IndexError, TypeError) as e:
        check('pattern card JSON has the reference schema', False,
              '%r\n%s' % (e, text))
    check('hisi_ptt.ko and dwc_pcie_pmu.ko load (no numa_node step)',
          out('insmod')[0] == 0, out('insmod')[1])
    pmus = out('pmus')[1].split()
    check('the PMUs %s and dwc_rootport_* are there' % PMU,
          PMU in pmus and any(p.startswith('dwc_rootport_') for p in pmus),
          out('pmus')[1])
    check('%s/cpumask: %s' % (PMU, out('cpumask')[1].strip()),
          re.match(r'^0', out('cpumask')[1].strip()), out('cpumask')[1])
    check('the PTT\'s interrupt is an MSI (through the ITS)',
          re.search(r'(ITS-)?(PCI-)?MSI.*hisi_ptt', out('irq')[1]),
          out('irq')[1])
    check('Debian\'s arm64 perf runs (%s)' % out('perf-version')[1].strip(),
          out('perf-version')[0] == 0, out('perf-version')[1])

    for d, frame, pay, bus in (
            ('in', 'MWr', RQ_PAYLOAD, 'PTC -> PCIe (RQ)'),
            ('out', 'CplD', RC_PAYLOAD, 'PCIe -> PTC (RC)')):
        key = DIRS[d][0]
        rc, text = out('record-' + d)
        parts = dict(re.findall(r'^=== (BLOCK|STAT|REPORT|TOOL)\n(.*?)'
                                r'(?=^=== |\Z)', text, re.M | re.S))
        check('perf record of %s (%s) under perf stat exits 0' % (PMU, d),
              rc == 0, text[-3000:])
        m = re.search(r'^records (\d+) bytes (\d+) first (\w*) last (\w*)$',
                      parts.get('REPORT', ''), re.M)
        byte3 = dict((int(k, 16), int(v)) for k, v in re.findall(
            r'^byte3 ([0-9a-f]{2}) (\d+)$', parts.get('REPORT', ''), re.M))
        if not m or not m.group(3):
            check('perf report -D decodes the %s trace' % d, False,
                  text[-3000:])
            continue
        records, aux = int(m.group(1)), int(m.group(2))
        span = (int(m.group(4), 16) - int(m.group(3), 16)) & 0xffffffff
        kinds = {}
        for b, n in byte3.items():
            kinds[kind_of(b)] = kinds.get(kind_of(b), 0) + n
        n = kinds.get(frame, 0)
        rate = (n - 1) / (span / 1e9) if span else 0
        check('perf report -D: %d 8DW records in %d bytes of AUX data, %s'
              % (records, aux, ', '.join('%s %d' % kv
                                         for kv in sorted(kinds.items()))),
              records > 0 and aux == 32 * records, parts.get('REPORT'))
        # outbound, the tool's reads of the block beside it are there too
        cpu = ('MRd', 'MWr') if d == 'out' else ()
        others = sum(v for k, v in kinds.items()
                     if k != frame and k not in cpu)
        check('perf report -D, %s: %d %s over %d ns of records: %.1f/s, the '
              'pattern\'s %.0f/s, nothing else (%d) but the block read '
              'beside it' % (d, n, frame, span, rate, FRAMES_S, others),
              others == 0 and n > 0.5 * FRAMES_S and
              abs(rate - FRAMES_S) <= 1e-4 * FRAMES_S, parts.get('REPORT'))
        try:
            blk = json_docs(parts['BLOCK'])[0]
            block = (blk['data']['endpoints'][0]['buses'][bus]
                     ['transactions'] / blk['seconds'])
        except (IndexError, KeyError, TypeError, ValueError,
                ZeroDivisionError) as e:
            block = 0
            check('the block\'s read beside perf (%s)' % d, False,
                  repr(e) + parts.get('BLOCK', '')[-2000:])
        check('the same second: perf\'s %s %.1f/s equal the block\'s %s '
              'frames %.1f/s within 1 %%' % (frame, rate, bus, block),
              block and abs(rate - block) <= RATE_TOL * block)
        s = re.search(r'^(\d+),[^,]*,dwc_rootport_\w+/%s_PCIe_TLP_Data_'
                      r'Payload/,(\d+)' % key, parts.get('STAT', ''), re.M)
        got = int(s.group(1)) / (int(s.group(2)) / 1e9) if s else 0
        check('the same second: the DesignWare PMU\'s %s payload %.4g B/s '
              'equals perf\'s %.1f frames/s x %d B within 1 %%'
              % (key, got, rate, pay),
              s and abs(got - rate * pay) <= RATE_TOL * rate * pay,
              parts.get('STAT', ''))
        try:
            tool = json_docs(parts['TOOL'])[0]['ptt']
            tkinds = dict((k['kind'], k['tlps']) for k in tool['kinds']
                          if k['tlps'])
            tpay = dict((k['kind'], k['payload_bytes'])
                        for k in tool['kinds'])
        except (IndexError, KeyError, TypeError, ValueError) as e:
            check('pcie-telemetry --ptt-input of perf\'s %s.data' % d, False,
                  repr(e) + parts.get('TOOL', '')[-2000:])
            continue
        check('pcie-telemetry --ptt-input of the same perf.data: the same '
              'records by kind (%s), %d B of payload each %s'
              % (', '.join('%s %d' % kv for kv in sorted(tkinds.items())),
                 pay, frame),
              tkinds == kinds and tool['total']['tlps'] == records and
              tpay.get(frame) == n * pay, parts.get('TOOL'))

    rc, text = out('perf-l0')
    m = re.search(r'^(\d+),[^,]*,dwc_rootport_\w+/L0/,(\d+)', text, re.M)
    l0, ran = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    check('perf stat of the DesignWare PMU\'s LTSSM event L0: %d ns over '
          'the %d ns it counted (the link up all the time) within 1 %%'
          % (l0, ran), rc == 0 and ran > 0 and abs(l0 - ran) <= 0.01 * ran,
          text)
    rc, text = out('tool-ptt')
    try:
        ptt = json_docs(text)[0]['ptt']
        kinds = dict((k['kind'], k) for k in ptt['kinds'])
        n, span = kinds['MWr']['tlps'], ptt['time_span_ns']
        rate = (n - 1) / (span / 1e9) if span else 0
        check('pcie-telemetry --ptt in (its own recording): %s, %d MWr of '
              '%d B, %.1f/s' % (ptt['pmu'], n, RQ_PAYLOAD, rate),
              rc == 0 and ptt['pmu'] == PMU and
              kinds['MWr']['payload_bytes'] == n * RQ_PAYLOAD and
              abs(rate - FRAMES_S) <= 1e-4 * FRAMES_S, text[-2000:])
    except (IndexError, KeyError, TypeError, ValueError) as e:
        check('pcie-telemetry --ptt in gives a trace', False,
              repr(e) + text[-2000:])
    rc, text = out('tool-port')
    try:
        doc = json_docs(text)[0]
        p, secs = doc['port'], doc['seconds']
        frames = (doc['data']['endpoints'][0]['buses']['PTC -> PCIe (RQ)']
                  ['transactions'] / secs)
        rx = p['rx']['value'] / p['rx']['seconds']
        check('pcie-telemetry --port both: port %s, PMU %s; its Rx payload '
              '%.4g B/s is the card\'s %.1f RQ frames/s x %d B within 1 %%'
              % (p['device'], p['pmu'], rx, frames, RQ_PAYLOAD),
              rc == 0 and p['device'] == '0000:00:10.0' and
              p['pmu'].startswith('dwc_rootport_') and
              abs(rx - frames * RQ_PAYLOAD) <= RATE_TOL * frames * RQ_PAYLOAD
              + (RQ_PAYLOAD + 16) / p['rx']['seconds'], text[-2000:])
    except (IndexError, KeyError, TypeError, ValueError,
            ZeroDivisionError) as e:
        check('pcie-telemetry --port gives the port and the card', False,
              repr(e) + text[-2000:])
    check('no BUG or WARNING in the guest\'s log',
          not re.search(r'BUG|WARNING', out('dmesg')[1]), out('dmesg')[1])
    return report([('guest console', console.splitlines())])


if __name__ == '__main__':
    sys.exit(main())
