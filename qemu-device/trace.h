/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "trace/trace-hw_misc_ndk_pcie_telemetry_qemu_device.h"
