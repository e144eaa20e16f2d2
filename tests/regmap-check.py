#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The JSON register map against the C header and the device's page.

usage: regmap-check.py REPO

Three statements of one map that must agree:
  guest-tool/regmap/pcie-telemetry-regs.json   (for tests in any language)
  guest-tool/include/pcie-telemetry-regs.h     (C; the model's agreement
                                                with it is test-regmap)
  docs/ndk-pcie-telemetry.md, "Register map"   (prose)
The header's values are read by compiling a program that prints them, so
macros are taken as the compiler sees them. Prints TAP.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

results = []


def check(ok, what):
    results.append((bool(ok), what))
    return ok


def header_values(header, exprs):
    """Evaluate C expressions with the header included."""
    cc = shutil.which(os.environ.get('CC', 'cc')) or shutil.which('gcc')
    lines = ['#include <stdio.h>', '#include "%s"' % header, 'int main(void)', '{']
    for i, e in enumerate(exprs):
        lines.append('    printf("%%d %%llu\\n", %d, (unsigned long long)(%s));' % (i, e))
    lines += ['    return 0;', '}']
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, 'regs.c')
        exe = os.path.join(d, 'regs')
        with open(src, 'w') as f:
            f.write('\n'.join(lines) + '\n')
        subprocess.run([cc, '-std=c99', '-Wall', '-Werror', '-o', exe, src],
                       check=True)
        out = subprocess.run([exe], check=True, capture_output=True,
                             text=True).stdout
    vals = {}
    for line in out.split('\n'):
        if line:
            i, v = line.split()
            vals[exprs[int(i)]] = int(v)
    return vals


def main():
    repo = os.path.abspath(sys.argv[1])
    header = os.path.join(repo, 'guest-tool/include/pcie-telemetry-regs.h')
    with open(os.path.join(repo, 'guest-tool/regmap/pcie-telemetry-regs.json')) as f:
        regmap = json.load(f)
    with open(os.path.join(repo, 'docs/ndk-pcie-telemetry.md')) as f:
        doc = f.read()

    # ---- JSON against the header
    checks = []     # (expression, expected value, what)
    for r in regmap['registers']:
        c = r['c'].replace('(e)', '(0)')
        checks.append((c, r['offset'], 'register %s at 0x%02x' % (r['name'], r['offset'])))
        if r.get('per'):
            checks.append((r['c'].replace('(e)', '(5)'), r['offset'] + 5 * r['stride'],
                           '%s of endpoint 5' % r['name']))
        for fl in r.get('fields', []):
            what = '%s.%s [%d+:%d]' % (r['name'], fl['name'], fl['lsb'], fl['width'])
            if 'c' in fl:
                checks.append((fl['c'] + '_SHIFT', fl['lsb'], what + ' shift'))
                checks.append((fl['c'] + '_MASK', (1 << fl['width']) - 1, what + ' mask'))
            elif 'c_bit' in fl:
                checks.append((fl['c_bit'], ((1 << fl['width']) - 1) << fl['lsb'], what))
    for r in regmap['vsec']['registers']:
        checks.append((r['c'], r['offset'], 'VSEC register %s' % r['name']))
    blk, vsec, q, cnt = regmap['block'], regmap['vsec'], regmap['qemu'], regmap['counters']
    checks += [
        ('PTL_MAGIC', blk['magic'], 'MAGIC'),
        ('PTL_VERSION_MAJOR', blk['version_major'], 'major version'),
        ('PTL_BLOCK_SIZE', blk['size'], 'block size'),
        ('PTL_REG_DECODE_MASK', blk['decode_mask'], 'decode mask'),
        ('PTL_MAX_ENDPOINTS', blk['max_endpoints'], 'endpoints'),
        ('PTL_CNT_BASE_VALUE', cnt['base'], 'counter window'),
        ('PTL_CNT_STRIDE', cnt['stride'], 'counter stride'),
        ('PTL_VSEC_CAP_ID', vsec['cap_id'], 'VSEC capability ID'),
        ('PTL_VSEC_ID', vsec['vsec_id'], 'VSEC ID'),
        ('PTL_VSEC_REV', vsec['revision'], 'VSEC revision'),
        ('PTL_VSEC_LEN', vsec['length'], 'VSEC length'),
        ('PTL_VSEC_HEADER_VALUE', vsec['header'], 'VSEC header'),
        ('PTL_QEMU_VENDOR_ID', q['vendor_id'], 'vendor ID'),
        ('PTL_QEMU_DEVICE_ID', q['device_id'], 'device ID'),
        ('PTL_QEMU_VSEC_OFFSET', q['vsec_offset'], 'VSEC offset'),
        ('PTL_QEMU_CLASS', q['class'], 'class'),
        ('PTL_HIST_BANDS', cnt['histograms']['bands'], 'histogram bands'),
        ('PTL_BRAKE_REASONS', len(cnt['brake_reasons']), 'BRAKE reasons'),
        ('PTL_CH_CYCLES', cnt['channel_cycles'], 'cycles channel'),
    ]
    for qn in cnt['bus_quantities']:
        macro = 'PTL_CH_REGION0' if qn['name'] == 'region' else 'PTL_CH_' + qn['name'].upper()
        checks.append((macro, qn['index'], 'bus quantity ' + qn['name']))
    for j, name in enumerate(cnt['brake_reasons']):
        checks.append(('PTL_BRAKE_' + name.upper(), j, 'BRAKE reason ' + name))
    # the layout rules as the JSON states them, for a 4-region probe
    for b in range(4):
        for k in range(10):
            checks.append(('ptl_bus_channel(4, %d, %d)' % (b, k), 1 + b * (6 + 4) + k,
                           'bus_channel rule, bus %d quantity %d' % (b, k)))
    checks.append(('ptl_brake_channel(2, 3)', 1 + 2 * (6 + 2) + 3, 'brake_channel rule'))
    checks.append(('ptl_entry(48, 31, 2, 1, 5)', 2 * 48 + 31 + 5, 'entry rule'))
    checks.append(('ptl_entries(3, 48)', 256, 'entries rule'))

    vals = header_values(header, [c[0] for c in checks])
    for expr, want, what in checks:
        got = vals[expr]
        check(got == want, 'header %s = %#x, JSON %#x (%s)' % (expr, got, want, what))
    for e in ('PTL_COMPATIBLE', 'PTL_DT_BUS_COMPATIBLE', 'PTL_DT_BUS_RESOURCE'):
        m = re.search(r'#define\s+%s\s+"([^"]*)"' % e, open(header).read())
        want = {'PTL_COMPATIBLE': blk['compatible'],
                'PTL_DT_BUS_COMPATIBLE': vsec['devtree']['bus_compatible'],
                'PTL_DT_BUS_RESOURCE': vsec['devtree']['bus_resource']}[e]
        check(m and m.group(1) == want, 'header %s is "%s"' % (e, want))

    # ---- JSON against the device's page
    sec = doc[doc.index('## Register map'):doc.index('## Semantics and timing')]
    rows = {}
    for m in re.finditer(r'^\| (0x[0-9A-Fa-f]+)(?: \+ 4e)? \| (\w+) \| (RO|WO|RW) \| (.*) \|$',
                         sec, re.M):
        rows[m.group(2)] = (int(m.group(1), 16), m.group(3).lower(), m.group(4))
    for r in regmap['registers']:
        row = rows.get(r['name'])
        if check(row, 'the page lists %s' % r['name']):
            check(row[0] == r['offset'], '%s at 0x%02x on the page' % (r['name'], r['offset']))
            check(row[1] == r['access'], '%s is %s on the page' % (r['name'], r['access']))
            for fl in r.get('fields', []):
                # CFG_DMA's row says "the same" as CFG_PCIE's
                if fl['width'] > 1 and r['name'] != 'VERSION' and \
                        not row[2].startswith('the same'):
                    hi = fl['lsb'] + fl['width'] - 1
                    check('[%d:%d]' % (hi, fl['lsb']) in row[2] or
                          'bytes 0..3' in row[2],
                          '%s.%s [%d:%d] on the page' % (r['name'], fl['name'], hi, fl['lsb']))
    extra = set(rows) - {r['name'] for r in regmap['registers']} - {'counters'}
    check(not extra, 'every register of the page is in the JSON (%s)' %
          ', '.join(sorted(extra)))
    m = re.search(r'counters \| RO \| counter i: low word at (0x[0-9A-F]+) \+ 8i', sec)
    check(m and int(m.group(1), 16) == cnt['base'], 'counter window base on the page')
    m = re.search(r'With the defaults the configuration registers read\s+([^(]*)\(', sec)
    if check(m, 'the page lists the default configuration registers'):
        page = [int(v, 16) for v in re.findall(r'0x[0-9A-F]{8}', m.group(1))]
        json_defaults = [r['default'] for r in regmap['registers']
                         if 'default' in r and r['offset'] not in (0x20, 0x24, 0x28)]
        check(page == json_defaults, 'defaults on the page %s = JSON %s' %
              ([hex(v) for v in page], [hex(v) for v in json_defaults]))
    for r in regmap['registers']:
        if 'value' in r:
            check(re.search(r'\| %s \| RO \| 0x%08X' % (r['name'], r['value']), sec),
                  '%s reads 0x%08X on the page' % (r['name'], r['value']))
    m = re.search(r'\| 0x104 \| RO \| (0x[0-9A-F]{8})', doc)
    check(m and int(m.group(1), 16) == vsec['header'], 'VSEC header on the page')
    for name, off in (('ENDPOINT', 0x108), ('LENGTH', 0x10C), ('INDEX', 0x110), ('DATA', 0x114)):
        r = [x for x in vsec['registers'] if x['name'] == name][0]
        check(re.search(r'\| 0x%X \| %s \|' % (off, r['access'].upper()), doc),
              'VSEC %s at 0x%X, %s on the page' % (name, off, r['access']))
    m = re.search(r'`1234:0d7b` by default', doc)
    check(m and (q['vendor_id'], q['device_id']) == (0x1234, 0x0d7b), 'IDs on the page')

    print('1..%d' % len(results))
    for i, (ok, what) in enumerate(results, 1):
        print('%s %d - %s' % ('ok' if ok else 'not ok', i, what))
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == '__main__':
    sys.exit(main())
