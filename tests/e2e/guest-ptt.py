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
#     N completions with 4 bytes each up, of the card's requester filter.
# Prints the checks as TAP; exit 0 all passed, 1 not, 77 (skipped) only
# when the 6.12 kernel cannot be made here, as guest-dwc.py.
import os
import re
import subprocess
import sys

from e2e_support import REPO, check, json_docs, pciutils_guest, report

K612 = os.path.join(REPO, 'scripts/guest-kernel-612.sh')
QEMU_ARGS = [
    '-device', 'hisi-ptt,addr=08.0,sicl-id=2,core-id=1',
    '-device', 'dwc-pcie-root-port,id=rp0,chassis=1,slot=1,addr=10.0',
    '-device', 'ndk-pcie-telemetry,bus=rp0',
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
READS = 40
BAR = ('$(cut -d" " -f1 /sys/bus/pci/devices/0000:01:00.0/resource | '
       'head -1)')
for d in ('out', 'in'):
    COMMANDS.append(('trace-%s' % d,
                     'b=%s; (sleep 0.3; i=0; while [ $i -lt %d ]; do '
                     'devmem $b 32 > /dev/null; i=$((i+1)); done) & '
                     'pcie-telemetry -d 01:00.0 --ptt %s -t 1 -j; wait'
                     % (BAR, READS, d)))
COMMANDS.append(('dmesg', 'dmesg | grep -i "hisi_ptt\\|BUG\\|WARNING"'))


def main():
    k = subprocess.run([K612], stdout=subprocess.PIPE, text=True)
    if k.returncode == 77:
        print('1..0 # SKIP the 6.12 guest kernel cannot be made here '
              '(scripts/guest-kernel-612.sh exited 77)')
        return 77
    module = subprocess.run([K612, '--ptt-module'], stdout=subprocess.PIPE,
                            text=True)
    if k.returncode != 0 or module.returncode != 0 or not module.stdout:
        check('guest-kernel-612.sh gives the kernel and hisi_ptt.ko', False,
              'exit %d, %d' % (k.returncode, module.returncode))
        return report([])
    steps, console = pciutils_guest(
        COMMANDS, QEMU_ARGS,
        [module.stdout.strip() + ':/lib/modules/hisi_ptt.ko'],
        kernel=k.stdout.strip(), tool=True)

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
            doc = json_docs(text)[0]['ptt']
            kinds = {k['kind']: k for k in doc['kinds']}
        except (IndexError, KeyError, TypeError) as e:
            check('pcie-telemetry --ptt %s -j gives a trace' % d, False,
                  repr(e) + text[-2000:])
            continue
        got = kinds.get(kind, {})
        others = sum(k['tlps'] for k in doc['kinds'] if k['kind'] != kind)
        check('--ptt %s: %s, requester filter 0000:01:00.0, %d %s TLPs of '
              'the %d devmem reads (%s), nothing else (%d)'
              % (d, doc.get('pmu'), got.get('tlps', 0), kind, READS,
                 'payload %s B' % got.get('payload_bytes'), others),
              rc == 0 and doc.get('pmu') == PMU and
              doc['filter']['name'] == '0000:01:00.0' and
              got.get('tlps') == READS and others == 0 and
              got.get('payload_bytes') == READS * payload,
              text[-3000:])
    check('no BUG or WARNING in the guest\'s log',
          not re.search(r'BUG|WARNING', out('dmesg')[1]), out('dmesg')[1])
    return report([('guest console', console.splitlines())])


if __name__ == '__main__':
    sys.exit(main())
