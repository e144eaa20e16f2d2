# SPDX-License-Identifier: GPL-2.0-or-later
#
# The pattern card of the guest tests (tests/e2e/guest-tool.py, the arm64
# guest's tests/e2e/guest-arm64.py) and what its report must say: the
# pattern source repeats one frame per bus, so every counter is a rate
# times the cycles it covers; the rates below are worked out by hand from
# the frame shapes (docs/ndk-pcie-telemetry.md, "pattern"), not taken from
# the tool.

# A card of the default geometry (2 regions of 32 B = 8 items of 4 B on
# every bus, DRAIN_PERIOD 4096, 256 tags, 1024 FIFO words).
PATTERN = ('rq-frame-bytes=256,rq-gap=4,rq-stall=2,'
           'rc-frame-bytes=100,rc-gap=1,'
           'up-frame-bytes=60,up-gap=2,up-stall=1,up-mvb-items=2,'
           'down-frame-bytes=32,brake=0x11,tags-free=20,stfifo-free=600')
# Per frame: period = stall + words + gap cycles; words moved; stalled
# cycles; MVB items; items (EOF_POS + 1 in the last region); cycles each
# region carries data.
#   RQ 256 B: 64 items, 8 regions = 4 words; period 2 + 4 + 4 = 10
#   RC 100 B: 25 items, 4 regions (8, 8, 8, 1) = 2 words; period 0 + 2 + 1
#   UP 60 B: 15 items, 2 regions = 1 word, 2 MVB items; period 1 + 1 + 2
#   DOWN 32 B: 8 items, region 0 only; period 1
FRAMES = {
    'PTC -> PCIe (RQ)': dict(period=10, words=4, stall=2, mvb=0, items=64,
                             regions=[4, 4]),
    'PCIe -> PTC (RC)': dict(period=3, words=2, stall=0, mvb=0, items=25,
                             regions=[2, 2]),
    'DMA0 -> PTC (UP)': dict(period=4, words=1, stall=1, mvb=2, items=15,
                             regions=[1, 1]),
    'PTC -> DMA0 (DOWN)': dict(period=1, words=1, stall=0, mvb=1, items=8,
                               regions=[1, 0]),
}
DRAIN = 4096

def near(value, expect, tol):
    return abs(value - expect) <= tol


def check_pattern(doc):
    """Every channel of the pattern card equals its closed form within one
    drain window of its own clock (plus one frame)."""
    ep = doc['data']['endpoints'][0]
    cyc = {True: ep['pcie_cycles'], False: ep['dma_cycles']}
    bad = []
    for name, f in FRAMES.items():
        bus = ep['buses'][name]
        c = cyc[bus['pcie_clk']]
        per = c / f['period']

        def want(key, per_frame, got):
            tol = per_frame * (DRAIN / f['period'] + 1) + 8
            if not near(got, per * per_frame, tol):
                bad.append('%s %s %d, expected %.0f +- %.0f'
                           % (name, key, got, per * per_frame, tol))
        want('words', f['words'], bus['words'])
        want('backpressure', f['stall'], bus['backpressure'])
        want('transactions', 1, bus['transactions'])
        want('mvb', f['mvb'], bus['mvb'])
        want('mvb_backpressure', f['stall'] if f['mvb'] else 0,
             bus['mvb_backpressure'])
        want('items', f['items'], bus['items'])
        for r, n in enumerate(f['regions']):
            want('region %d' % r, n, bus['regions'][r])
    c = ep['pcie_cycles']
    for k, v in enumerate(ep['brakes']):
        exp = c if k in (0, 4) else 0
        if not near(v, exp, DRAIN + 8):
            bad.append('brake %d %d, expected %d' % (k, v, exp))
    for h, band in ((0, 1), (1, 3)):   # 20 of 256 tags, 600 of 1024 words
        for b, v in enumerate(ep['hists'][h]):
            exp = c if b == band else 0
            if not near(v, exp, DRAIN + 8):
                bad.append('hist %d band %d %d, expected %d' % (h, b, v, exp))
    if not near(ep['dma_cycles'], c / 2, 2 * DRAIN):
        bad.append('dma_cycles %d vs pcie_cycles %d' % (ep['dma_cycles'], c))
    return bad
