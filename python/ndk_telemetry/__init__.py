# SPDX-License-Identifier: GPL-2.0-or-later
"""Drive ndk-pcie-telemetry cards in a QEMU under -accel qtest.

    from ndk_telemetry import Machine, Card, Traffic
    with Machine(cards=[Card(traffic=Traffic('pattern',
                                             {'rq-frame-bytes': 256}))]) as m:
        card = m.cards[0]
        m.clock_step(100000)
        card.snapshot()
        print(card.counters()['RQ.words'])

See docs/python.md.
"""
from .errors import (BusyTimeout, CardError, NdkError, QemuDied,
                     QemuNotFound, QemuStartError, QemuTimeout, QmpError,
                     QTestError, RegmapNotFound)
from .layout import Counters, Layout
from .machine import ENV_QEMU, Card, Machine, Traffic, resolve_qemu
from .regmap import (ENV_REGMAP, Field, Register, RegisterMap, RegisterValue,
                     find_regmap, load_regmap)

__all__ = [
    'BusyTimeout', 'Card', 'CardError', 'Counters', 'ENV_QEMU', 'ENV_REGMAP',
    'Field', 'Layout', 'Machine', 'NdkError', 'QemuDied', 'QemuNotFound',
    'QemuStartError', 'QemuTimeout', 'QmpError', 'QTestError', 'Register',
    'RegisterMap', 'RegisterValue', 'RegmapNotFound', 'Traffic',
    'find_regmap', 'load_regmap', 'resolve_qemu',
]
