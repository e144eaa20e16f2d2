#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""pcie-telemetry --input on saved readings (TAP).

Every reading of tests/unit/data/report rendered by the tool equals the
reference's report and JSON of it; a watch's concatenated documents give
one report each, from a file and from standard input; CSV and Prometheus
of saved documents; malformed files and options that read a card are
usage errors (exit 2) with one line that names the file and the document.
"""
import os
import subprocess
import sys
import tempfile

TOOL = sys.argv[1]
DATA = sys.argv[2]
NAMES = ['example', 'pattern-1x1', 'pattern-2x2', 'pattern-16ep', 'flags',
         'totals', 'unnamed', 'unnamed-totals', 'few-reasons', 'zero',
         'zero-totals']
results = []


def check(name, ok, detail=''):
    results.append((name, bool(ok), detail))


def run(args, stdin=None):
    p = subprocess.run([TOOL] + args, input=stdin, capture_output=True,
                       timeout=60)
    return p.returncode, p.stdout.decode('utf-8', 'replace'), \
        p.stderr.decode('utf-8', 'replace')


def data(name):
    with open(os.path.join(DATA, name), encoding='utf-8') as f:
        return f.read()


def one_line_error(name, rc, out, err, *words):
    check(name, rc == 2 and out == '' and err.count('\n') == 1 and
          err.startswith('pcie-telemetry: ') and
          all(w in err for w in words),
          'rc %d, stdout %r, stderr %r' % (rc, out[:200], err))


for n in NAMES:
    path = os.path.join(DATA, n + '.json')
    rc, out, err = run(['--input', path])
    check('%s: the text report is the reference\'s' % n,
          rc == 0 and err == '' and out == data(n + '.txt'), err or out)
    rc, out, err = run(['--input', path, '-j'])
    check('%s: the JSON is the reference\'s' % n,
          rc == 0 and out == data(n + '.json'), err or out)

watch = os.path.join(DATA, 'watch.json')
rc, out, err = run(['--input', watch])
check('watch: one report per document', rc == 0 and out == data('watch.txt'),
      err or out)
rc, out, err = run(['--input', '-'], stdin=data('watch.json').encode())
check('watch from standard input', rc == 0 and out == data('watch.txt'),
      err or out)
rc, out, err = run(['--input=-', '--json'],
                   stdin=data('watch.json').encode())
check('watch: JSON, one document each',
      rc == 0 and out == data('watch.out.json'), err or out)
# the tool's own JSON output is input again
rc2, out2, err2 = run(['--input', '-'], stdin=out.encode())
check('watch: JSON written by --input -j reads back',
      rc2 == 0 and out2 == data('watch.txt'), err2 or out2)

rc, out, err = run(['--input', watch, '--csv'])
rows = out.splitlines()
check('watch: CSV has one header and a row per bus of each document',
      rc == 0 and len(rows) == 1 + 3 * 4 and
      all(r.count(',') == rows[0].count(',') for r in rows), out)
check('CSV: no time of day, the file as device, no block index',
      rows[1].startswith(',0.000082,%s,,0,PTC -> PCIe (RQ),RQ,' % watch),
      rows[1] if len(rows) > 1 else out)
rc, out, err = run(['--input', os.path.join(DATA, 'totals.json'),
                    '--prometheus'])
check('Prometheus of a totals document',
      rc == 0 and 'ndk_pcie_telemetry_cycles_total{device="%s",index="",'
      'endpoint="0",clock="pcie"} 32768\n' % os.path.join(DATA, 'totals.json')
      in out, err or out)
rc, out, err = run(['--input', watch, '--prometheus'])
one_line_error('Prometheus of an interval document: refused', rc, '', err,
               watch, 'document 1', '"seconds": null')

with tempfile.TemporaryDirectory() as tmp:
    def bad_file(name, text, *words):
        path = os.path.join(tmp, name)
        with open(path, 'wb') as f:
            f.write(text)
        rc, out, err = run(['--input', path])
        # reports of the documents before the bad one are printed
        one_line_error('malformed: ' + name, rc, '', err, path, *words)
        return out

    w = data('watch.json')
    docs = w.split('\n\n')
    bad_file('empty.json', b'', 'no document')
    bad_file('space.json', b'  \n', 'no document')
    bad_file('array.json', b'[]', 'document 1: line 1, column 1',
             "expected '{'")
    bad_file('truncated.json', w[:-40].encode(), 'document 3: line',
             'not closed')
    second = docs[1].replace('"busy": false', '"busy": 0')
    bad_file('second.json', (docs[0] + '\n\n' + second).encode(),
             'document 2: line', 'data.status.busy: expected true or false')
    bad_file('trailing-comma.json', docs[0].replace(
        '"dma_up": false\n', '"dma_up": false,\n', 1).encode(),
        'document 1: line', 'expected a key')
    bad_file('nul.json', b'{"seconds": null\x00}', 'document 1: line 1, '
             'column 17', 'found byte 0x00')
    bad_file('deep.json', b'{"a":' + b'[' * 100000, 'document 1',
             'nested deeper than 64 levels')

    def prefix_printed():
        path = os.path.join(tmp, 'second.json')
        rc, out, err = run(['--input', path])
        return out == data('pattern-1x1.txt')
    check('malformed second document: the first one is still reported',
          prefix_printed())

rc, out, err = run(['--input', '/nonexistent/x.json'])
one_line_error('a file that cannot be opened', rc, out, err,
               '/nonexistent/x.json')

for opt in (['-d', '03:00.0'], ['-i', '0'], ['-t', '1'], ['-t', '0'], ['-w'],
            ['-c'], ['--bar', '0', '--offset', '0'], ['--offset', '0x2000'],
            ['-l']):
    rc, out, err = run(['--input', watch] + opt)
    one_line_error('--input with %s: usage error' % opt[0], rc, out, err,
                   opt[0], '--input')

print('1..%d' % len(results))
for i, (name, ok, detail) in enumerate(results, 1):
    print('%s %d - %s' % ('ok' if ok else 'not ok', i, name))
    if not ok and detail:
        for line in str(detail)[:3000].splitlines():
            print('# ' + line)
sys.exit(0)
