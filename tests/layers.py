#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Hold the rooms of qemu-device/ and traffic-gen/ to their layers.

Each room is a folder of one device model (docs/architecture.md). A room
lists its files in layers, lowest first; a file may include and call only
files of a lower layer of its room (a header may be included by the files
of its own layer too) or files of the rooms below its room. Glue files
(built inside QEMU only) sit on top of their room and alone may include
QEMU's headers. Checked:

- includes, from the sources: every #include "x.h" of every file of a
  room, against the layers; a header no room lists, a QEMU header in a core
  file, and a circle of includes are breaches too;
- calls, from the built libraries (nm): every symbol a file uses that
  another file defines, against the same order; a circle of calls between
  files is a breach even where no layers are given.

Prints each breach and exits 1 if there is one; --stamp FILE is written when
there is none (a build target). --self-test first checks that a call back
up, an include back up and a circle are caught.
"""

import argparse
import os
import re
import subprocess
import sys

# room -> (folder, the rooms it may use, layers lowest first, glue)
# A layer is a list of file stems (x for x.c and x.h), or of a header alone
# (x.h) where an API's header lies below the file that implements it.
ROOMS = {
    'common': ('qemu-device/common', [], [['ptm-bytes']], []),
    'telemetry': ('qemu-device/telemetry', ['common'], [
        ['ptm-signals', 'ptm-types', 'ptm-config', 'ptm-count'],
        ['ptm-core-int', 'ptm-probe-int', 'ptm-probe'],
        ['ptm-fifo-int', 'ptm-fifo'],
        ['ptm-eval-int', 'ptm-eval', 'ptm-check'],
        ['ptm-core'],
        ['ptm-sizing'],
    ], []),
    'link': ('qemu-device/link', [], [['pcie-link-totals', 'pcie-tlp']],
             ['pcie-link-traffic']),
    'ndp-dma': ('qemu-device/ndp-dma', ['common'], [
        ['ndp-dma-int', 'ndp-dma'],
        ['ndp-dma-state'],
    ], ['ndk-dma']),
    'traffic-gen': ('traffic-gen', ['common', 'telemetry'], [
        ['ptm-gen', 'ptm-plugin-abi', 'ptm-link', 'ptm-frames',
         'ptm-transfers',
         'ptm-dma-traffic.h'],
        ['ptm-pattern', 'ptm-ptc', 'ptm-plugin', 'ptm-trace',
         'ptm-dma-traffic-int', 'ptm-dma-place'],
        ['ptm-random', 'ptm-vcd', 'ptm-dma-count'],
        ['ptm-replay', 'ptm-dma-traffic'],
        ['ptm-phase-models'],
        ['ptm-scenario'],
        ['ptm-models'],
    ], ['telemetry-traffic', 'traffic-qom']),
    'flit': ('qemu-device/flit', ['common'], [['flit-link'], ['flit-end']],
             ['flit-pci']),
    'hisi-ptt': ('qemu-device/hisi-ptt', ['common', 'link'], [['ptt-core']],
                 ['hisi-ptt']),
    'xdata': ('qemu-device/xdata', ['common', 'link'], [['xdata-core']],
              ['dw-xdata']),
    'pg381': ('qemu-device/pg381', ['common'], [
        ['pg381-core.h', 'pg381-int', 'pg381-timing'],
        ['pg381-core'],
        ['pg381-state', 'pg381-csv'],
    ], []),
    'dwc': ('qemu-device/dwc', ['common', 'link', 'flit'], [['dwc-ras-des']],
            ['dwc-pcie-root-port']),
    'card': ('qemu-device/card', ['common', 'telemetry', 'link', 'ndp-dma',
                                  'flit', 'pg381', 'traffic-gen'],
             [['ptm-devtree']],
             ['ndk-card', 'ndk-pcie-telemetry', 'ndk-card-config',
              'ndk-card-migration', 'ndk-card-tlps', 'ndk-card-pg381']),
}

# headers of QEMU's tree a glue file reaches by these names
QEMU_LOCAL = {'trace.h'}


def place(rooms):
    """stem or header -> (room, rank, glue)"""
    where, alone = {}, {}
    for room, (_, _, layers, glue) in rooms.items():
        for rank, layer in enumerate(layers):
            for stem in layer:
                (alone if stem.endswith('.h') else where)[stem] = \
                    (room, rank, False)
        for stem in glue:
            where[stem] = (room, len(layers), True)
    where.update(alone)
    return where


def key_of(name, where):
    """the entry of `where` a file name falls under"""
    return name if name in where else stem_of(name)


def below(rooms, a, b):
    """whether room b lies below room a (a may use b)"""
    seen, todo = set(), list(rooms[a][1])
    while todo:
        r = todo.pop()
        if r == b:
            return True
        if r not in seen:
            seen.add(r)
            todo.extend(rooms[r][1])
    return False


def step_ok(rooms, where, f, g, header):
    """may file f use file g (include it if header, else call it)?"""
    rf, kf, _ = where[f]
    rg, kg, _ = where[g]
    if rf != rg:
        return below(rooms, rf, rg)
    return kg < kf or (header and kg == kf)


def stem_of(name):
    """'ptm-fifo.c.o', 'ptm-fifo.o' or 'ptm-fifo.h' -> 'ptm-fifo'"""
    base = os.path.basename(name)
    return re.sub(r'(\.c)?\.(o|obj|c|h)$', '', base)


def find_cycle(edges):
    """a circle in {node: set(nodes)} as a list, or None"""
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(edges.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(edges):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def read_includes(root, rooms):
    """[(file name, line, included name)] of every file of every room"""
    out = []
    for room, (folder, _, _, _) in rooms.items():
        d = os.path.join(root, folder)
        for name in sorted(os.listdir(d)):
            if not name.endswith(('.c', '.h')):
                continue
            with open(os.path.join(d, name), encoding='utf-8') as fh:
                for n, line in enumerate(fh, 1):
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if m:
                        out.append((name, n, m.group(1)))
    return out


def include_breaches(rooms, includes):
    where, out, edges = place(rooms), [], {}
    for name, n, inc in includes:
        f = key_of(name, where)
        if f not in where:
            out.append('%s: a file no room lists' % name)
            continue
        glue = where[f][2]
        if '/' in inc or inc in QEMU_LOCAL:
            if not glue:
                out.append('%s:%d includes %s: only glue may include '
                           "QEMU's headers" % (name, n, inc))
            continue
        g = key_of(inc, where)
        if g not in where:
            out.append('%s:%d includes %s, which no room lists' %
                       (name, n, inc))
            continue
        if g != f:
            edges.setdefault(name, set()).add(inc)
            if not step_ok(rooms, where, f, g, True):
                out.append('%s:%d includes %s (%s layer %d) from %s layer %d:'
                           ' not below' % (name, n, inc, where[g][0],
                                           where[g][1], where[f][0],
                                           where[f][1]))
    cycle = find_cycle(edges)
    if cycle:
        out.append('a circle of includes: ' + ' -> '.join(cycle))
    return out


def parse_nm(text):
    """nm -A output -> (defined: sym -> file, used: [(file, sym)])"""
    defined, used = {}, []
    for line in text.splitlines():
        m = re.match(r'^(.*?):([^:\s]+):\s*(?:([0-9a-fA-F]+)\s+)?([A-Za-z])\s+(\S+)$',
                     line)
        if not m:
            continue
        f, kind, sym = stem_of(m.group(2)), m.group(4), m.group(5)
        if kind in 'TDBR':
            defined[sym] = f
        elif kind == 'U':
            used.append((f, sym))
    return defined, used


def call_breaches(rooms, defined, used):
    where, out, edges = place(rooms), [], {}
    for f, sym in used:
        g = defined.get(sym)
        if g is None or g == f:
            continue
        edges.setdefault(f, set()).add(g)
        if f not in where or g not in where:
            out.append('%s uses %s of %s: a file of no room' % (f, sym, g))
        elif not step_ok(rooms, where, f, g, False):
            out.append('%s (%s layer %d) calls %s of %s (%s layer %d): '
                       'not below' % (f, where[f][0], where[f][1], sym, g,
                                      where[g][0], where[g][1]))
    cycle = find_cycle(edges)
    if cycle:
        out.append('a circle of calls: ' + ' -> '.join(cycle))
    return out


def self_test():
    rooms = {
        'low': ('low', [], [['a'], ['b']], []),
        'high': ('high', ['low'], [['c']], ['g']),
    }
    listing = '\n'.join([
        'lib.a:a.c.o:0000000000000010 T a_run',
        'lib.a:a.c.o:                 U b_step',
        'lib.a:b.c.o:0000000000000000 T b_step',
        'lib.a:b.c.o:                 U a_run',
        'lib.a:c.c.o:0000000000000000 T c_go',
        'lib.a:c.c.o:                 U a_run',
    ])
    found = call_breaches(rooms, *parse_nm(listing))
    # a's call up to b, and the circle it makes
    if (len(found) != 2 or 'b_step' not in found[0] or
            'circle' not in found[1]):
        print('self-test: expected a call up and a circle, got %r' % found)
        return 1
    includes = [('a.c', 3, 'b.h'), ('b.h', 5, 'c.h'), ('c.c', 2, 'b.h'),
                ('c.c', 4, 'qemu/osdep.h'), ('g.c', 4, 'qemu/osdep.h'),
                ('a.c', 9, 'x.h')]
    found = include_breaches(rooms, includes)
    want = ['a.c:3 includes b.h', 'b.h:5 includes c.h',
            'c.c:4 includes qemu/osdep.h', 'a.c:9 includes x.h']
    if len(found) != len(want) or any(not b.startswith(w)
                                      for b, w in zip(found, want)):
        print('self-test: expected %r, got %r' % (want, found))
        return 1
    found = include_breaches(rooms, [('b.h', 1, 'a.h'), ('a.h', 1, 'b.h')])
    if not any(b.startswith('a circle of includes') for b in found):
        print('self-test: a circle of includes went unseen, got %r' % found)
        return 1
    print('self-test: a call back up, an include back up, a QEMU header '
          'in a core file and a circle are caught')
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--nm', default='nm')
    ap.add_argument('--root', required=True)
    ap.add_argument('--stamp')
    ap.add_argument('--self-test', action='store_true')
    ap.add_argument('--libs', nargs='*', default=[])
    a = ap.parse_args()
    if a.self_test and self_test():
        return 1
    libs = [p for p in a.libs if p.endswith('.a')]
    text = ''.join(subprocess.run([a.nm, '-A', lib], check=True,
                                  stdout=subprocess.PIPE,
                                  universal_newlines=True).stdout
                   for lib in libs)
    defined, used = parse_nm(text)
    where = place(ROOMS)
    missing = [f for f, (r, _, glue) in where.items()
               if not glue and not f.endswith('.h') and
               f not in defined.values() and
               os.path.exists(os.path.join(a.root, ROOMS[r][0], f + '.c'))]
    found = call_breaches(ROOMS, defined, used)
    found += include_breaches(ROOMS, read_includes(a.root, ROOMS))
    found += ['%s.c: no symbols in the libraries' % f for f in missing]
    for b in found:
        print('layer breach: ' + b, file=sys.stderr)
    if found:
        return 1
    calls = sum(1 for f, s in used if defined.get(s, f) != f)
    print('layers: %d rooms, %d files, %d calls and every include downwards'
          % (len(ROOMS), len(where), calls))
    if a.stamp:
        with open(a.stamp, 'w', encoding='utf-8') as fh:
            fh.write('ok\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
