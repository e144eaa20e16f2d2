# SPDX-License-Identifier: GPL-2.0-or-later
"""Counter entries by name, from the card's configuration registers and
the "counters" rules of the JSON register map.

Names of a probe's channels (endpoint e's entries start at e x
per_endpoint, its DMA probe's after the PCIe probe's channels):

  pcie.cycles, dma.cycles               channel 0 of each probe
  <BUS>.<quantity>                      BUS: RQ, RC (PCIe probe), UP<p>,
                                        DOWN<p> (DMA port p; UP and DOWN
                                        alone mean port 0); quantity:
                                        words, stall, sof, mvb, mvb_stall,
                                        items, region<r>
  brake.<reason>                        no_free_pcie_tag, ... (PCIe probe)
  hist.<name>.<band>                    hist.tags.0 .. hist.stfifo.3

A full name puts the endpoint first: ep1.RQ.words.
"""
from .errors import CardError


class ProbeLayout:
    """One probe's channels: channel 0 the cycles, then per bus a block of
    the fixed quantities and one region count per region, then (PCIe
    probe) the BRAKE reasons and the histogram bands."""

    def __init__(self, name, base, channels, bus_names, regions,
                 quantities, brake_reasons=(), hist_names=(), bands=0):
        self.name = name
        self.base = base                    # channel 0's offset in an endpoint
        self.channels = channels
        self.bus_names = list(bus_names)
        self.regions = regions
        self.fixed = [q['name'] for q in quantities if 'count' not in q]
        self.index = {q['name']: q['index'] for q in quantities}
        self.region_index = next(q['index'] for q in quantities
                                 if q.get('count') == 'regions')
        self.bus_stride = len(self.fixed) + regions
        self.brake_reasons = list(brake_reasons)
        self.hist_names = list(hist_names)
        self.bands = bands
        self.side = 1 + len(self.bus_names) * self.bus_stride
        want = self.side + len(self.brake_reasons) + \
            len(self.hist_names) * bands
        if want != channels:
            raise CardError('%s probe: the register map\'s rules give %d '
                            'channels, the card says %d' %
                            (name, want, channels))

    def bus_channel(self, bus, quantity, region=None):
        """1 + bus x (fixed + regions) + quantity, as the map's
        bus_channel rule."""
        b = self.bus_names.index(bus)
        if quantity == 'region':
            if region is None or not 0 <= region < self.regions:
                raise CardError('%s.region needs a region 0 .. %d' %
                                (bus, self.regions - 1))
            q = self.region_index + region
        elif quantity in self.fixed:
            q = self.index[quantity]
        else:
            raise CardError('no bus quantity %r (there are: %s, '
                            'region<r>)' % (quantity, ', '.join(self.fixed)))
        return 1 + b * self.bus_stride + q

    def names(self):
        """Channel names in channel order."""
        out = ['%s.cycles' % self.name]
        for bus in self.bus_names:
            out += ['%s.%s' % (bus, q) for q in self.fixed]
            out += ['%s.region%d' % (bus, r) for r in range(self.regions)]
        out += ['brake.%s' % r for r in self.brake_reasons]
        for h in self.hist_names:
            out += ['hist.%s.%d' % (h, j) for j in range(self.bands)]
        return out


class Layout:
    """Where each counter of a card is. Built from the configuration
    registers (as decoded RegisterValues) and the map's "counters"
    section."""

    def __init__(self, rules, topology, layout, cfg_pcie, cfg_dma, cfg_hist):
        self.endpoints = topology.endpoints
        self.dma_ports = topology.dma_ports
        self.entries = layout.entries
        self.cnt_width = layout.cnt_width
        self.per_endpoint = layout.per_endpoint
        self.base = rules['base']
        self.stride = rules['stride']
        quantities = rules['bus_quantities']
        probes = {p['name']: p for p in rules['probes']}
        hist = rules['histograms']
        if cfg_hist.bands != hist['bands']:
            raise CardError('CFG_HIST says %d bands, the register map %d' %
                            (cfg_hist.bands, hist['bands']))
        if cfg_hist.pcie_hists != len(hist['order']):
            raise CardError('CFG_HIST says %d PCIe histograms, the register '
                            'map names %d' % (cfg_hist.pcie_hists,
                                              len(hist['order'])))
        self.pcie = ProbeLayout(
            'pcie', 0, cfg_pcie.channels, probes['pcie']['buses'],
            cfg_pcie.regions, quantities, rules['brake_reasons'],
            hist['order'], hist['bands'])
        # the DMA probe: UP of port p is bus 2p, DOWN is 2p+1
        dma_buses = []
        for p in range(self.dma_ports):
            dma_buses += ['UP%d' % p, 'DOWN%d' % p]
        if cfg_dma.buses != len(dma_buses):
            raise CardError('CFG_DMA says %d buses, %d DMA ports make %d' %
                            (cfg_dma.buses, self.dma_ports, len(dma_buses)))
        self.dma = ProbeLayout('dma', cfg_pcie.channels, cfg_dma.channels,
                               dma_buses, cfg_dma.regions, quantities)
        if self.pcie.channels + self.dma.channels != self.per_endpoint:
            raise CardError('CFG_LAYOUT says %d counters per endpoint, the '
                            'probes have %d + %d' % (
                                self.per_endpoint, self.pcie.channels,
                                self.dma.channels))
        self._names = []
        for e in range(self.endpoints):
            for probe in (self.pcie, self.dma):
                self._names += ['ep%d.%s' % (e, n) for n in probe.names()]
        self._entry = {n: i for i, n in enumerate(self._names)}

    @property
    def used(self):
        """Entries that belong to an endpoint (the rest read 0)."""
        return self.endpoints * self.per_endpoint

    def address(self, entry):
        """Offset of counter `entry` in the block."""
        return self.base + self.stride * entry

    def entry(self, name, endpoint=0):
        """The entry of a channel name ('RQ.words', 'dma.cycles', ...) of
        an endpoint; a full name ('ep1.RQ.words') carries its own."""
        if not name.startswith('ep'):
            if not 0 <= endpoint < self.endpoints:
                raise CardError('endpoint %d: the card has %d' %
                                (endpoint, self.endpoints))
            parts = name.split('.')
            if parts[0] in ('UP', 'DOWN'):
                parts[0] += '0'
            name = 'ep%d.%s' % (endpoint, '.'.join(parts))
        try:
            return self._entry[name]
        except KeyError:
            raise CardError('no counter %r on this card; names look like '
                            'ep0.pcie.cycles, ep0.RQ.words, ep0.UP0.region1, '
                            'ep0.brake.%s, ep0.hist.tags.2' %
                            (name, self.pcie.brake_reasons[0]
                             if self.pcie.brake_reasons else 'x'))

    def name(self, entry):
        """The full name of an entry, None past the last endpoint."""
        return self._names[entry] if entry < len(self._names) else None

    def names(self):
        return list(self._names)


class BusCounters:
    """One bus's counters: words, stall, sof, mvb, mvb_stall, items and
    region (a list, one per region)."""

    def __init__(self, ep, bus):
        self.name = bus
        for q in ep.probe_of(bus).fixed:
            setattr(self, q, ep['%s.%s' % (bus, q)])
        self.region = [ep['%s.region%d' % (bus, r)]
                       for r in range(ep.probe_of(bus).regions)]

    def __repr__(self):
        return 'BusCounters(%s: %s)' % (self.name, ', '.join(
            '%s=%s' % (k, v) for k, v in vars(self).items() if k != 'name'))


class EndpointCounters:
    """The counters of one endpoint: c['RQ.words'], c.bus('RQ').words,
    c.pcie_cycles, c.dma_cycles, c.brake['no_free_pcie_tag'],
    c.hist['tags'][2]."""

    def __init__(self, counters, endpoint):
        self._c = counters
        self.endpoint = endpoint
        lay = counters.layout
        self.pcie_cycles = self['pcie.cycles']
        self.dma_cycles = self['dma.cycles']
        self.brake = {r: self['brake.' + r] for r in lay.pcie.brake_reasons}
        self.hist = {h: [self['hist.%s.%d' % (h, j)]
                         for j in range(lay.pcie.bands)]
                     for h in lay.pcie.hist_names}

    def probe_of(self, bus):
        lay = self._c.layout
        return lay.pcie if bus in lay.pcie.bus_names else lay.dma

    def __getitem__(self, name):
        return self._c.values[self._c.layout.entry(name, self.endpoint)]

    def bus(self, name):
        if name in ('UP', 'DOWN'):
            name += '0'
        lay = self._c.layout
        if name not in lay.pcie.bus_names + lay.dma.bus_names:
            raise CardError('no bus %r (there are: %s)' % (
                name, ', '.join(lay.pcie.bus_names + lay.dma.bus_names)))
        return BusCounters(self, name)


class Counters:
    """Every counter of a card read at one moment: values[i] is entry i;
    c[i], c['RQ.words'] (endpoint 0), c['ep1.RQ.words'],
    c.get('RQ.words', endpoint=1), c.endpoint(1).bus('RQ').words."""

    def __init__(self, layout, values, live=None, time_ns=None):
        self.layout = layout
        self.values = list(values)
        self.live = live
        self.time_ns = time_ns

    def __len__(self):
        return len(self.values)

    def __iter__(self):
        return iter(self.values)

    def __getitem__(self, key):
        if isinstance(key, (int, slice)):
            return self.values[key]
        return self.values[self.layout.entry(key)]

    def get(self, name, endpoint=0):
        return self.values[self.layout.entry(name, endpoint)]

    def endpoint(self, e):
        if not 0 <= e < self.layout.endpoints:
            raise CardError('endpoint %d: the card has %d' %
                            (e, self.layout.endpoints))
        return EndpointCounters(self, e)

    def as_dict(self):
        """{full name: value} of every entry that belongs to an endpoint."""
        return {n: self.values[i] for i, n in enumerate(self.layout.names())
                if i < len(self.values)}

    def __eq__(self, other):
        if isinstance(other, Counters):
            return self.values == other.values
        return self.values == list(other)

    def __repr__(self):
        return 'Counters(%d entries%s)' % (
            len(self.values), '' if self.live is None else
            ', live' if self.live else ', snapshot')
