#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The unmodified hisi_ptt driver (scripts/guest-kernel-612.sh
# --ptt-module, from Debian's linux-source-6.12) against the hisi-ptt
# device in the 6.12 guest, with a dwc-pcie-root-port at 00:10.0 and the
# card below it:
#   - the device is 19e5:a12e, an RCiEP with BAR 2 and MSI (lspci 3.15 of
#     scripts/pciutils.sh);
#   - after the documented numa_node step the driver binds it and
#     registers the PMU hisi_ptt2_1 (LOCATION: SICL 2, core 1), with its
#     cpumask and format files;
#   - the filters of the 6.12 driver: the root port 0000:00:10.0 as
#     0x80001 ((slot & 7) * 2 = 0: bit 0, and bit 19), the card 01:00.0
#     as the requester 0x00100;
#   - each of the five tune files reads 1 after reset, reads back 0 and
#     2, and 5 as 2 (the hardware's clamp);
#   - the driver's interrupt is an MSI (the device asks for one vector);
#   - pcie-telemetry --ptt out and --ptt in (perf_event_open on the PMU,
#     the AUX area the driver fills) over a second in which the guest
#     reads the card's BAR 0 N times with devmem: N memory reads down and
#     N completions with 4 bytes each up, of the card's requester filter;
#   - the card's pattern traffic over one second, three ways at once: the
#     trace in 8DW records with their times (a write of 240 B up and a
#     completion of 52 B down every 10 us, every one), under perf stat of
#     the DesignWare PMU's Rx or Tx payload, beside pcie-telemetry's read
#     of the NDK block's own RQ and RC frame counts: the same rates within
#     1 %.
# Prints the checks as TAP; exit 0 all passed, 1 not, 77 (skipped) only
# when the 6.12 kernel cannot be made here, as guest-dwc.py.
import re
import sys

from e2e_support import Guest612, check, json_docs, pciutils_guest, report

# RQ 256 B (4 words) and RC 64 B (1 word) every 4000 cycles of 400 MHz
PATTERN = ('rq-frame-bytes=256,rq-gap=3996,rq-stall=0,'
           'rc-frame-bytes=64,rc-gap=3999,rc-stall=0')
FRAMES_S = 400e6 / 4000
RQ_PAYLOAD, RC_PAYLOAD = 256 - 16, 64 - 12
RATE_TOL = 0.01
QEMU_ARGS = [
    '-device', 'hisi-ptt,addr=08.0,sicl-id=2,core-id=1',
    '-device', 'dwc-pcie-root-port,id=rp0,chassis=1,slot=1,addr=10.0',
    '-object', 'telemetry-traffic-pattern,id=t0,' + PATTERN,
    '-device', 'ndk-pcie-telemetry,bus=rp0,traffic=t0',
]
PMU = 'hisi_ptt2_1'
P = '/sys/bus/event_source/devices/' + PMU
TUNE = ['qos_tx_cpl', 'qos_tx_np', 'qos_tx_p', 'rx_alloc_buf_level',
        'tx_alloc_buf_level']
FIND = ('for d in /sys/bus/pci/devices/*; do '
        '[ "$(cat $d/vendor):$(cat $d/device)" = "0x19e5:0xa12e" ] && '
        'echo ${d##*/}; done')
COMMANDS = [
    ('kernel', 'uname -r'),
    ('find', FIND),
    ('lspci', 'lspci -vv -d 19e5:a12e'),
    # the device sits on q35's root bus, node -1: the driver needs one
    ('numa', 'echo 0 > /sys/bus/pci/devices/$(%s)/numa_node' % FIND),
    ('insmod', 'insmod /lib/modules/hisi_ptt.ko'),
    ('bound', 'ls /sys/bus/pci/drivers/hisi_ptt'),
    ('pmus', 'ls /sys/bus/event_source/devices'),
    ('cpumask', 'cat %s/cpumask' % P),
    ('format', 'cd %s/format && grep . *' % P),
    ('filters', 'cd %s && grep . root_port_filters/* requester_filters/*'
     % P),
    ('irq', 'grep hisi_ptt /proc/interrupts'),
]
for f in TUNE:
    COMMANDS.append(('tune-%s' % f,
                     't=%s/tune/%s; cat $t; echo 0 > $t; cat $t; '
                     'echo 2 > $t; cat $t; echo 5 > $t; cat $t; '
                     'echo 1 > $t; cat $t' % (P, f)))
# N reads of the card's BAR 0 while the tool traces one direction
READS = 20
BAR = ('$(cut -d" " -f1 /sys/bus/pci/devices/0000:01:00.0/resource | '
       'head -1)')
# (the trace runs 4 s; the reads start 1 s in, after the tool's start,
# and take about 0.4 s; the PTT's BAR is the driver's: no devmem there)
for d in ('out', 'in'):
    COMMANDS.append(('trace-%s' % d,
                     'b=%s; pcie-telemetry -d 01:00.0 --ptt %s -t 4 -j '
                     '> /tmp/trace.json & sleep 1; i=0; while [ $i -lt %d ]; '
                     'do devmem $b 32 > /dev/null; i=$((i+1)); done; wait; '
                     'cat /tmp/trace.json' % (BAR, d, READS)))
# The pattern alone over one second, three ways at once: the trace in
# 8DW records with their times (under perf stat of the DesignWare PMU's
# payload event of the same direction) and the NDK block's own counts
COMMANDS.append(('insmod-dwc', 'insmod /lib/modules/dwc_pcie_pmu.ko'))
for d, key in (('out', 'Tx'), ('in', 'Rx')):
    COMMANDS.append((
        'same-%s' % d,
        'pmu=$(ls /sys/bus/event_source/devices | grep dwc_rootport_); '
        'pcie-telemetry -d 01:00.0 -t 1 -j > /tmp/block.json & '
        'perf stat -a -x, -o /tmp/perf.txt '
        '-e "$pmu/%s_PCIe_TLP_Data_Payload/" -- pcie-telemetry -d 01:00.0 '
        '--ptt %s --ptt-format 8dw -t 1 -j > /tmp/ptt.json; wait; '
        'echo "=== PTT"; cat /tmp/ptt.json; echo "=== BLOCK"; '
        'cat /tmp/block.json; echo "=== PERF"; cat /tmp/perf.txt'
        % (key, d)))
COMMANDS.append(('dmesg', 'dmesg | grep -i "hisi_ptt\\|BUG\\|WARNING"'))


def main():
    g = Guest612(ptt=True)
    if g.skip:
        print(g.skip_line())
        return 77
    if g.error:
        check('guest-kernel-612.sh gives the kernel, hisi_ptt.ko, '
              'dwc_pcie_pmu.ko and perf', False, g.error)
        return report([])
    steps, console = pciutils_guest(COMMANDS, QEMU_ARGS, g.files,
                                    kernel=g.kernel, tool=True)

    def out(name):
        return steps.get(name, (None, ''))

    check('guest ran all commands to its end',
          re.search(r'^GUEST-EXIT 0', console, re.M), console[-3000:])
    addr = out('find')[1].strip()
    check('one 19e5:a12e function on the root bus (%s)' % addr,
          re.match(r'^0000:00:08\.0$', addr), out('find')[1])
    rc, text = out('lspci')
    check('lspci: a Root Complex Integrated Endpoint with a 64-bit BAR 2 of '
          '4K and MSI with one vector',
          re.search(r'Root Complex Integrated Endpoint', text) and
          re.search(r'Region 2: Memory at \w+ \(64-bit, non-prefetchable\) '
                    r'\[size=4K\]', text) and
          re.search(r'MSI: Enable\S Count=1/1 Maskable- 64bit\+', text),
          text)
    check('the numa_node step and insmod succeed',
          out('numa')[0] == 0 and out('insmod')[0] == 0,
          out('numa')[1] + out('insmod')[1])
    check('the driver binds %s' % addr, addr and addr in out('bound')[1],
          out('bound')[1])
    check('the driver registers the PMU %s (LOCATION SICL 2, core 1)' % PMU,
          PMU in out('pmus')[1].split(), out('pmus')[1])
    check('%s/cpumask names CPUs of node 0 (%s)'
          % (PMU, out('cpumask')[1].strip()),
          re.match(r'^\d', out('cpumask')[1].strip()), out('cpumask')[1])
    rc, text = out('format')
    check('its format: filter config:0-19, direction 20-23, type 24-31, '
          'format 32-35',
          all(x in text for x in ('filter:config:0-19',
                                  'direction:config:20-23',
                                  'type:config:24-31',
                                  'format:config:32-35')), text)
    rc, text = out('filters')
    check('the root port filter 0000:00:10.0 is 0x80001',
          re.search(r'^root_port_filters/0000:00:10\.0:0x80001$', text,
                    re.M), text)
    check('the requester filter 0000:01:00.0 is 0x00100',
          re.search(r'^requester_filters/0000:01:00\.0:0x00100$', text,
                    re.M), text)
    check('the driver\'s interrupt is an MSI',
          re.search(r'PCI-MSI.*hisi_ptt', out('irq')[1]), out('irq')[1])
    for f in TUNE:
        rc, text = out('tune-' + f)
        vals = text.split()
        check('tune/%s: 1 after reset, then 0, 2, 5 taken as 2, 1 (%s)'
              % (f, ' '.join(vals)),
              rc == 0 and vals == ['1', '0', '2', '2', '1'], text)
    for d, kind, payload in (('out', 'MRd', 0), ('in', 'CplD', 4)):
        rc, text = out('trace-' + d)
        try:
            ptt = json_docs(text)[0]['ptt']
            kinds = {k['kind']: k for k in ptt['kinds']}
        except (IndexError, KeyError, TypeError) as e:
            check('pcie-telemetry --ptt %s -j gives a trace' % d, False,
                  repr(e) + text[-2000:])
            continue
        reads = kinds.get(kind, {})
        check('--ptt %s: %s, requester filter 0000:01:00.0, %d %s TLPs of '
              '%d B each for the %d devmem reads'
              % (d, ptt.get('pmu'), reads.get('tlps', 0), kind, payload,
                 READS),
              rc == 0 and ptt.get('pmu') == PMU and
              ptt['filter']['name'] == '0000:01:00.0' and
              reads.get('tlps') == READS and
              reads.get('payload_bytes') == READS * payload,
              text[-3000:])
    # the pattern's frames over one second: the trace (every frame, at its
    # period by the records' times), the NDK block's own frame count and
    # the DesignWare PMU's payload, all three at once
    for d, frame, pay, key, bus in (
            ('out', 'CplD', RC_PAYLOAD, 'Tx', 'PCIe -> PTC (RC)'),
            ('in', 'MWr', RQ_PAYLOAD, 'Rx', 'PTC -> PCIe (RQ)')):
        rc, text = out('same-' + d)
        parts = dict(re.findall(r'^=== (PTT|BLOCK|PERF)\n(.*?)(?=^=== |\Z)',
                                text, re.M | re.S))
        try:
            ptt = json_docs(parts['PTT'])[0]['ptt']
            kinds = {k['kind']: k for k in ptt['kinds']}
            span = ptt['time_span_ns']
            n = kinds[frame]['tlps']
            blk = json_docs(parts['BLOCK'])[0]
            block = (blk['data']['endpoints'][0]['buses'][bus]
                     ['transactions'] / blk['seconds'])
        except (IndexError, KeyError, TypeError, ZeroDivisionError) as e:
            check('--ptt %s in 8DW, the block and perf at once give their '
                  'counts' % d, False, repr(e) + text[-3000:])
            continue
        rate = (n - 1) / (span / 1e9) if span else 0
        # besides: outbound, the tool's accesses to the block beside it
        cpu = ('MRd', 'MWr') if d == 'out' else ()
        others = sum(k['tlps'] for k in ptt['kinds']
                     if k['kind'] != frame and k['kind'] not in cpu)
        check('--ptt %s, 8DW: %d %s of %d B over %d ns of records: %.1f/s, '
              'the pattern\'s %.0f/s, nothing else (%d) but the block '
              'read beside it (%d MRd, %d MWr)'
              % (d, n, frame, pay, span or 0, rate, FRAMES_S, others,
                 kinds.get('MRd', {}).get('tlps', 0) if cpu else 0,
                 kinds.get('MWr', {}).get('tlps', 0) if cpu else 0),
              kinds[frame]['payload_bytes'] == n * pay and others == 0 and
              n > 0.5 * FRAMES_S and
              abs(rate - FRAMES_S) <= 1e-4 * FRAMES_S, text[-3000:])
        check('the same second: the trace\'s %s %.1f/s equal the block\'s '
              '%s frames %.1f/s within 1 %%' % (frame, rate, bus, block),
              block and abs(rate - block) <= RATE_TOL * block)
        m = re.search(r'^(\d+),[^,]*,dwc_rootport_\w+/%s_PCIe_TLP_Data_'
                      r'Payload/,(\d+)' % key, parts.get('PERF', ''), re.M)
        got = int(m.group(1)) / (int(m.group(2)) / 1e9) if m else 0
        check('the same second: the PMU\'s %s payload %.4g B/s equals the '
              'trace\'s %.1f frames/s x %d B = %.4g B/s within 1 %%'
              % (key, got, rate, pay, rate * pay),
              m and abs(got - rate * pay) <= RATE_TOL * rate * pay,
              parts.get('PERF', ''))
    check('no BUG or WARNING in the guest\'s log',
          not re.search(r'BUG|WARNING', out('dmesg')[1]), out('dmesg')[1])
    return report([('guest console', console.splitlines())])


if __name__ == '__main__':
    sys.exit(main())
