# SPDX-License-Identifier: GPL-2.0-or-later
"""A card test as an NDK team would write one, with pytest and the
ndk_telemetry package (docs/python.md). Run it from this directory:

    PYTHONPATH=<clone>/python \
    QTEST_QEMU_BINARY=<clone>/build/qemu-system-x86_64 \
        /usr/bin/python3 -m pytest -p ndk_telemetry.pytest_plugin -q
"""

# 256-byte frames back to back on RQ: 64 items of 4 bytes fill 8 regions
# of 8 items, 2 regions a word, so a word moves in every PCIe cycle
RQ_BURST = ('pattern', {'rq-frame-bytes': 256})


def test_rq_words_follow_the_windows(ndk_card):
    card = ndk_card(traffic=RQ_BURST)
    # virtual time moves only when the test steps it
    card.machine.clock_set(card.mid_window(10))
    card.snapshot()
    c = card.counters()
    k = card.windows_counted('pcie')
    dp = card.read('CFG_DRAIN').drain_period
    assert k == 10
    # after k windows the cycle counter holds k x DRAIN_PERIOD - 1 cycles
    # (window 0 is one cycle short)
    assert c['pcie.cycles'] == k * dp - 1
    # RQ words: every one of those cycles but the first (a probe does not
    # see bus events in its first cycle), and the words channel's windows
    # close 5 cycles after the cycle counter's (read-out slot 1 x (G + 1),
    # G = ceil(31 channels / 8) = 4)
    assert c['RQ.words'] == k * dp - 1 - 1 + 5
    assert card.read('STATUS').lost == 0


def test_clear(ndk_card):
    card = ndk_card({'pcie-endpoints': 2}, traffic=RQ_BURST)
    # read in the middle of a window, far from the drains that add to
    # the counters
    card.machine.clock_set(card.mid_window(9))
    card.snapshot()
    assert card.counter(1, 'RQ', 'words') > 0
    card.machine.clock_set(card.mid_window(10))
    card.clear()
    # both copies are zero right after CLEAR
    assert set(card.counters(live=True)) == {0}
    assert set(card.counters(live=False)) == {0}
    # and the probes go on counting: the next window arrives whole
    card.machine.clock_set(card.mid_window(11))
    live = card.counters(live=True)
    assert live.get('pcie.cycles', endpoint=1) == \
        card.read('CFG_DRAIN').drain_period
