#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The PG381 generator on the card, run from a guest as docs/pg381.md ("On
# the card", "Running a program from the guest") says, with busybox devmem
# on the BAR: 16 reads of 4 beats of 64 bytes from guest memory, START,
# done; then pcie-telemetry --pg381 -j, whose figures must be the raw
# registers (CAPTURE_ALL, then the copies, read here with devmem) put
# together by the documented formulas: bandwidth = beats x 64 B /
# (effective cycles / clock), latency = cycles x 1e9 / clock; and the
# text report. (The QTest pg381-test holds the counters and the telemetry's
# counts to the timing rule.) TAP.
import re
import sys

from e2e_support import check, guest_commands, json_docs, report

QEMU_ARGS = ['-m', '512M',
             '-device', 'pcie-root-port,id=rp0,chassis=1,slot=1',
             '-device', 'ndk-pcie-telemetry,bus=rp0,pg381=on']
CLOCK = 400e6
DEV = '/sys/bus/pci/devices/0000:01:00.0'
# BAR 0 and the generator's window in it
B = '$(( $(cut -d" " -f1 %s/resource | head -1) + 0x1800000 ))' % DEV
# the copies after CAPTURE_ALL: 0x2238 + (register - 0x2000)
REGS = {'ARREQ': 0x2018, 'RBEAT': 0x2014, 'RLAST': 0x201C,
        'RBW_EFF_CLK': 0x2020, 'RWORST': 0x2024, 'RBEST': 0x2028,
        'RAVG': 0x202C, 'FLOW_EMPTY': 0x2050}
PROGRAM = ('g=%s; '
           'w() { devmem $((g + $1)) 32 $2; }; '
           # memory decoding and bus mastering: no driver took the card
           "printf '\\006\\000' | dd of=%s/config bs=1 seek=4 "
           'conv=notrunc 2>/dev/null; '
           'w 0x4000 0; w 0x4000 1; '
           'i=0; while [ $i -lt 16 ]; do w $((0x8000 + 4 * i)) 0; '
           'i=$((i + 1)); done; '
           'w 0x8000 0x44; w 0x8004 16; w 0x800C 0x1603; '
           'w 0x8018 0x100000; w 0x8020 0x10FFFF; '
           'w 0x4004 1; '
           'n=0; while [ $n -lt 100 ]; do '
           'f=$(devmem $((g + 0x2050)) 32); '
           '[ $(( f & 0x210 )) != 0 ] && break; n=$((n + 1)); done; '
           'echo "FLOW $f"' % (B, DEV))
DUMP = ('g=%s; devmem $((g + 0x2234)) 32 > /dev/null; for r in %s; do '
        'echo "REG $r $(devmem $((g + 0x2238 + r - 0x2000)) 32)"; done'
        % (B, ' '.join(str(v) for v in REGS.values())))
COMMANDS = [
    ('run', PROGRAM),
    ('regs', DUMP),
    ('tool', 'pcie-telemetry -d 01:00.0 --pg381 -j'),
    ('text', 'pcie-telemetry -d 01:00.0 --pg381'),
]


def main():
    steps, console = guest_commands(COMMANDS, QEMU_ARGS, tool=True)

    def out(name):
        return steps.get(name, (None, ''))

    check('guest ran all commands to its end',
          re.search(r'^GUEST-EXIT 0', console, re.M), console[-3000:])
    m = re.search(r'^FLOW 0x([0-9A-Fa-f]+)$', out('run')[1], re.M)
    flow = int(m.group(1), 16) if m else 0
    check('the program runs to done without error (FLOW_EMPTY %#x)' % flow,
          flow & 0x200 and not flow & 0x10, out('run')[1])
    raw = {}
    for off, val in re.findall(r'^REG (\d+) 0x([0-9A-Fa-f]+)$',
                               out('regs')[1], re.M):
        raw[int(off)] = int(val, 16)
    reg = dict((k, raw.get(v)) for k, v in REGS.items())
    check('16 read requests, 64 beats, 16 RLASTs (%s)' % reg,
          (reg['ARREQ'], reg['RBEAT'], reg['RLAST']) == (16, 64, 16),
          out('regs')[1])
    rc, text = out('tool')
    try:
        g = json_docs(text)[0]['pg381']
        rd = g['read']
    except (IndexError, KeyError, TypeError, ValueError) as e:
        check('pcie-telemetry --pg381 -j gives the generator', False,
              repr(e) + text[-2000:])
        return report([('guest console', console.splitlines())])
    check('--pg381: the node perf_axi_tg0@1800000 at BAR0 0x1800000, '
          'clock 400 MHz, done',
          rc == 0 and 'perf_axi_tg0@1800000' in g['node'] and
          g['offset'] == 0x1800000 and g['clock_hz'] == CLOCK and
          g['done'] and not g['error'], text)
    check('--pg381 read counts are the registers\'',
          (rd['requests'], rd['beats'], rd['lasts'], rd['effective_cycles'],
           rd['best_cycles'], rd['worst_cycles'], rd['sum_cycles']) ==
          (reg['ARREQ'], reg['RBEAT'], reg['RLAST'], reg['RBW_EFF_CLK'],
           reg['RBEST'], reg['RWORST'], reg['RAVG']), text)
    cyc = reg['RBW_EFF_CLK'] or 1
    bw = reg['RBEAT'] * 64 / (cyc / CLOCK)
    check('--pg381 read bandwidth %.6g B/s = %d beats x 64 B in %d cycles '
          'of 400 MHz (%.6g)' % (rd['bytes_per_s'] or 0, reg['RBEAT'], cyc,
                                 bw),
          rd['bytes_per_s'] and abs(rd['bytes_per_s'] - bw) <= 1e-6 * bw)
    want = (reg['RBEST'] * 2.5, reg['RWORST'] * 2.5,
            reg['RAVG'] * 2.5 / max(reg['ARREQ'], 1))
    check('--pg381 read latency best/worst/average %s ns = %s' %
          ((rd['best_ns'], rd['worst_ns'], rd['avg_ns']), want),
          all(abs(a - b) <= 1e-6 * b for a, b in
              zip((rd['best_ns'], rd['worst_ns'], rd['avg_ns']), want)))
    check('the latency is at least the PTC model\'s 1000 ns of a read '
          '(best %.1f ns)' % rd['best_ns'], rd['best_ns'] >= 1000)
    rc, text = out('text')
    check('--pg381 as text: exit 0 and the read row',
          rc == 0 and re.search(r'^\s*read\s+16\s+64\s+16\b', text, re.M),
          text)
    return report([('guest console', console.splitlines())])


if __name__ == '__main__':
    sys.exit(main())
