# SPDX-License-Identifier: GPL-2.0-or-later
"""The JSON register map (guest-tool/regmap/pcie-telemetry-regs.json) as
typed registers and fields.

The map is searched in this order: the file NDK_TELEMETRY_REGMAP names;
guest-tool/regmap/ of the clone the package sits in; share/pcie-telemetry/
under the package's ancestors (an installed prefix), sys.prefix,
/usr/local, /usr and the directories of XDG_DATA_DIRS.
"""
import json
import os
import sys

from .errors import CardError, RegmapNotFound

ENV_REGMAP = 'NDK_TELEMETRY_REGMAP'
FILE_NAME = 'pcie-telemetry-regs.json'
REPO_PATH = os.path.join('guest-tool', 'regmap', FILE_NAME)
SHARE_PATH = os.path.join('share', 'pcie-telemetry', FILE_NAME)


def regmap_candidates():
    """Every path find_regmap() tries, in order."""
    here = os.path.dirname(os.path.abspath(__file__))
    out = []
    if os.environ.get(ENV_REGMAP):
        out.append(os.environ[ENV_REGMAP])
    d = here
    while True:
        out.append(os.path.join(d, REPO_PATH))
        out.append(os.path.join(d, SHARE_PATH))
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    prefixes = [sys.prefix, '/usr/local', '/usr']
    prefixes += [os.path.dirname(x.rstrip('/')) for x in
                 os.environ.get('XDG_DATA_DIRS', '').split(':') if x]
    for p in prefixes:
        out.append(os.path.join(p, SHARE_PATH))
    seen, uniq = set(), []
    for p in out:
        if p not in seen:
            seen.add(p)
            uniq.append(p)
    return uniq


def find_regmap():
    """The path of the JSON register map; RegmapNotFound names the places
    searched."""
    env = os.environ.get(ENV_REGMAP)
    if env:
        if not os.path.isfile(env):
            raise RegmapNotFound('%s=%s: no such file' % (ENV_REGMAP, env))
        return env
    tried = regmap_candidates()
    for p in tried:
        if os.path.isfile(p):
            return p
    raise RegmapNotFound(
        'the register map %s is in none of: %s; set %s to its path' %
        (FILE_NAME, ', '.join(tried), ENV_REGMAP))


class Field:
    """Bits lsb .. lsb + width - 1 of a register."""

    def __init__(self, d):
        self.name = d['name']
        self.lsb = d['lsb']
        self.width = d['width']
        self.description = d.get('description', '')
        self.mask = ((1 << self.width) - 1) << self.lsb

    def extract(self, value):
        return (value & self.mask) >> self.lsb

    def insert(self, value, x):
        x = int(x)
        if x < 0 or x >> self.width:
            raise ValueError('field %s is %d bits wide: %d does not fit' %
                             (self.name, self.width, x))
        return (value & ~self.mask) | (x << self.lsb)

    def __repr__(self):
        return 'Field(%s, [%d:%d])' % (self.name,
                                       self.lsb + self.width - 1, self.lsb)


class Register:
    """A 32-bit register of the block: name, offset, access ('ro', 'rw',
    'wo'), fields, and where the map gives them the constant `value`, the
    `default` (of a card with the default properties) and `reset` value.
    A register repeated per endpoint has `count` copies `stride` apart."""

    def __init__(self, d):
        self.name = d['name']
        self.offset = d['offset']
        self.access = d['access']
        self.description = d.get('description', '')
        self.value = d.get('value')
        self.default = d.get('default')
        self.reset = d.get('reset')
        self.stride = d.get('stride')
        self.count = d.get('count')
        self.per = d.get('per')
        self.fields = [Field(f) for f in d.get('fields', [])]
        self.field_by_name = {f.name: f for f in self.fields}

    def address(self, endpoint=None):
        """Offset in the block; per-endpoint registers need the endpoint."""
        if self.stride is None:
            if endpoint not in (None, 0):
                raise CardError('%s is not a per-endpoint register' %
                                self.name)
            return self.offset
        if endpoint is None:
            raise CardError('%s is per %s: give endpoint=' %
                            (self.name, self.per))
        if not 0 <= endpoint < self.count:
            raise CardError('%s: endpoint %d, the map has %d' %
                            (self.name, endpoint, self.count))
        return self.offset + self.stride * endpoint

    def field(self, name):
        try:
            return self.field_by_name[name]
        except KeyError:
            raise CardError('%s has no field %r (it has: %s)' % (
                self.name, name, ', '.join(self.field_by_name) or 'none'))

    def decode(self, value):
        return RegisterValue(value, self)

    def encode(self, value=0, **fields):
        """value with the named fields put in."""
        for name, x in fields.items():
            value = self.field(name).insert(value, x)
        return value

    def __repr__(self):
        return 'Register(%s @0x%02x %s)' % (self.name, self.offset,
                                            self.access)


class RegisterValue(int):
    """A register's value: an int whose fields are attributes
    (v.entries) and items (v['entries'])."""

    def __new__(cls, value, register):
        self = super().__new__(cls, value)
        self.register = register
        return self

    def __getattr__(self, name):
        reg = self.__dict__.get('register')
        if reg is not None and name in reg.field_by_name:
            return reg.field_by_name[name].extract(int(self))
        raise AttributeError('%s has no field %r' % (
            reg.name if reg is not None else 'register', name))

    def __getitem__(self, name):
        return self.register.field(name).extract(int(self))

    def as_dict(self):
        return {f.name: f.extract(int(self)) for f in self.register.fields}

    def __repr__(self):
        fields = ' '.join('%s=%d' % kv for kv in self.as_dict().items())
        return '%s(0x%08x%s)' % (self.register.name, int(self),
                                 ': ' + fields if fields else '')


class RegisterMap:
    """The whole JSON map: registers by name, and the map's sections
    (block, counters, vsec, qemu) as the JSON has them."""

    def __init__(self, path):
        self.path = path
        with open(path) as f:
            self.data = json.load(f)
        if self.data.get('format') != 1:
            raise CardError('%s: format %r, this package reads format 1' %
                            (path, self.data.get('format')))
        self.block = self.data['block']
        self.counters = self.data['counters']
        self.vsec = self.data['vsec']
        self.qemu = self.data['qemu']
        self.registers = [Register(r) for r in self.data['registers']]
        self.by_name = {r.name: r for r in self.registers}

    def register(self, name):
        try:
            return self.by_name[name]
        except KeyError:
            raise CardError('the register map has no register %r (it has: '
                            '%s)' % (name, ', '.join(self.by_name)))

    def vsec_register(self, name):
        for r in self.vsec['registers']:
            if r['name'] == name:
                return r['offset']
        raise CardError('the VSEC has no register %r' % name)

    def __iter__(self):
        return iter(self.registers)


_cache = {}


def load_regmap(path=None):
    """The register map at path (default: find_regmap()), read once."""
    path = os.path.abspath(path or find_regmap())
    if path not in _cache:
        _cache[path] = RegisterMap(path)
    return _cache[path]
