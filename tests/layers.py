#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Hold the engine's files to their layers: each calls only those below.

The layers of qemu-device/ (see ptm-core-int.h), lowest first:

  0  layout           ptm-config.c, ptm-count.c
  1  probes           ptm-probe.c
  2  FIFO and adder   ptm-fifo.c
  3  evaluation       ptm-eval.c; the state check ptm-check.c beside it
  4  register file    ptm-core.c
  5  sizing           ptm-sizing.c (a user of the register file)

From the built library (nm): every symbol a file uses that another file of
it defines must come from a lower layer. From the sources: a file includes
no internal header of a layer above its own. Prints each breach and exits
1 if there is one; --stamp FILE is written when there is none (a build
target), --self-test checks that a call back up is caught.
"""

import argparse
import os
import re
import subprocess
import sys

RANK = {
    'ptm-config': 0, 'ptm-count': 0,
    'ptm-probe': 1,
    'ptm-fifo': 2,
    'ptm-eval': 3, 'ptm-check': 3,
    'ptm-core': 4,
    'ptm-sizing': 5,
}

# internal headers and the layer they belong to
HEADER_RANK = {
    'ptm-core-int.h': 1,
    'ptm-probe-int.h': 1,
    'ptm-fifo-int.h': 2,
    'ptm-eval-int.h': 3,
}


def member_file(name):
    """'ptm-fifo.c.o' or 'ptm-fifo.o' -> 'ptm-fifo'"""
    base = os.path.basename(name)
    return re.sub(r'(\.c)?\.o(bj)?$', '', base)


def parse_nm(text):
    """nm -A output -> (defined: sym -> file, used: [(file, sym)])"""
    defined, used = {}, []
    for line in text.splitlines():
        m = re.match(r'^(.*?):([^:\s]+):\s*(?:([0-9a-fA-F]+)\s+)?([A-Za-z])\s+(\S+)$',
                     line)
        if not m:
            continue
        f, kind, sym = member_file(m.group(2)), m.group(4), m.group(5)
        if kind in 'TDBR':
            defined[sym] = f
        elif kind == 'U':
            used.append((f, sym))
    return defined, used


def call_breaches(defined, used):
    out = []
    for f, sym in used:
        g = defined.get(sym)
        if g is None or g == f:
            continue
        if f not in RANK or g not in RANK:
            out.append('%s uses %s of %s: a file of no known layer' %
                       (f, sym, g))
        elif RANK[g] >= RANK[f]:
            out.append('%s (layer %d) calls %s of %s (layer %d): not below' %
                       (f, RANK[f], sym, g, RANK[g]))
    return out


def include_breaches(src):
    out = []
    for f, rank in RANK.items():
        path = os.path.join(src, f + '.c')
        if not os.path.exists(path):
            out.append('%s.c: missing' % f)
            continue
        with open(path, encoding='utf-8') as fh:
            for n, line in enumerate(fh, 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if m and HEADER_RANK.get(m.group(1), 0) > rank:
                    out.append('%s.c:%d includes %s of layer %d' %
                               (f, n, m.group(1), HEADER_RANK[m.group(1)]))
    return out


def self_test():
    listing = '\n'.join([
        'lib.a:ptm-fifo.c.o:0000000000000010 T ptm_run_to',
        'lib.a:ptm-fifo.c.o:                 U ptm_eval_restart',
        'lib.a:ptm-fifo.c.o:                 U ptm_probe_drain',
        'lib.a:ptm-probe.c.o:0000000000000000 T ptm_probe_drain',
        'lib.a:ptm-eval.c.o:0000000000000000 T ptm_eval_restart',
        'lib.a:ptm-eval.c.o:                 U ptm_run_to',
    ])
    defined, used = parse_nm(listing)
    found = call_breaches(defined, used)
    # the FIFO's call up to the evaluation, and nothing else
    if len(found) != 1 or 'ptm_eval_restart' not in found[0]:
        print('self-test: expected one breach, got %r' % found)
        return 1
    print('self-test: a call back up is caught: %s' % found[0])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--nm', default='nm')
    ap.add_argument('--lib')
    ap.add_argument('--src')
    ap.add_argument('--stamp')
    ap.add_argument('--self-test', action='store_true')
    a = ap.parse_args()
    if a.self_test and self_test():
        return 1
    if not a.lib or not a.src:
        return 0 if a.self_test else ap.error('--lib and --src are needed')
    text = subprocess.run([a.nm, '-A', a.lib], check=True,
                          stdout=subprocess.PIPE,
                          universal_newlines=True).stdout
    defined, used = parse_nm(text)
    missing = [f for f in RANK if f not in defined.values()]
    found = call_breaches(defined, used) + include_breaches(a.src)
    found += ['%s: no symbols in %s' % (f, a.lib) for f in missing]
    for b in found:
        print('layer breach: ' + b, file=sys.stderr)
    if found:
        return 1
    print('layers: %d files, %d calls between them, every one downwards' %
          (len(RANK), sum(1 for f, s in used
                          if defined.get(s, f) != f)))
    if a.stamp:
        with open(a.stamp, 'w', encoding='utf-8') as fh:
            fh.write('ok\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
