#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# docs/prometheus/pcie-telemetry-exporter.service: systemd-analyze verify
# finds nothing to say about it, its sandbox keeps an exposure of at most
# 2.5 (systemd-analyze security), and it keeps the privileges that
# docs/prometheus.md explains. TAP output; a plan of 0 tests with SKIP
# (meson: SKIP) without systemd-analyze (meson.build registers a test
# that exits 77 then and does not run this).
# usage: verify-unit.sh UNIT TOOL [SYSTEMD-ANALYZE]
#   UNIT  the unit file; TOOL  the built pcie-telemetry, which replaces
#   /usr/local/bin/pcie-telemetry in ExecStart (verify checks that the
#   command exists); SYSTEMD-ANALYZE  default: the one in PATH.
set -uo pipefail
usage="usage: verify-unit.sh UNIT TOOL [SYSTEMD-ANALYZE]"
unit=${1:?$usage}
tool=${2:?$usage}
sa=${3:-$(command -v systemd-analyze)}
if [ -z "$sa" ] || [ ! -x "$sa" ]; then
    echo "1..0 # SKIP systemd-analyze not found"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../tap.sh"

name=$(basename "$unit")
copy=$tmp/$name
sed "s|^ExecStart=/usr/local/bin/pcie-telemetry |ExecStart=$tool |" "$unit" > "$copy"
if grep -q "^ExecStart=$tool --listen " "$copy"; then
    ok "ExecStart runs /usr/local/bin/pcie-telemetry --listen (the built tool here)"
else
    fail "ExecStart runs /usr/local/bin/pcie-telemetry --listen (the built tool here)" \
        "$(grep '^ExecStart' "$unit")"
fi

# verify exits 0 after warnings such as an unknown key: any output fails.
# --man=no: the man page of Documentation= is not installed at test time.
if out=$("$sa" verify --man=no "$copy" 2>&1) && [ -z "$out" ]; then
    ok "systemd-analyze verify: no errors, no warnings"
else
    fail "systemd-analyze verify: no errors, no warnings" "$out"
fi

# --threshold is on the scale 0..100 of the exposure shown as 0.0..10.0
if out=$("$sa" security --offline=yes --threshold=25 "$copy" 2>&1); then
    ok "systemd-analyze security: exposure at most 2.5 ($(sed -n "s/.*Overall exposure level[^:]*: \([0-9.]* [A-Z]*\).*/\1/p" <<< "$out"))"
else
    fail "systemd-analyze security: exposure at most 2.5" "$(tail -n 20 <<< "$out")"
fi

# The privileges docs/prometheus.md gives reasons for: the settings as the
# unit's [Service] lines (comments left out).
settings=$(grep -v '^[[:space:]]*#' "$unit")
expect() {
    local what=$1 re=$2
    if grep -Eq "$re" <<< "$settings"; then ok "$what"; else fail "$what" "no line matches /$re/"; fi
}
refuse() {
    local what=$1 re=$2 hit
    if hit=$(grep -E "$re" <<< "$settings"); then fail "$what" "$hit"; else ok "$what"; fi
}
caps=$(grep -E '^CapabilityBoundingSet=' <<< "$settings")
if [ "$caps" = CapabilityBoundingSet=CAP_SYS_ADMIN ]; then
    ok "CapabilityBoundingSet is CAP_SYS_ADMIN alone"
else
    fail "CapabilityBoundingSet is CAP_SYS_ADMIN alone" "${caps:-no CapabilityBoundingSet=}"
fi
refuse "no AmbientCapabilities" '^AmbientCapabilities=.'
refuse "runs as root: no User=, DynamicUser= or PrivateUsers=" '^(User|DynamicUser|PrivateUsers)='
refuse "no ProtectKernelTunables (it makes /sys read-only)" '^ProtectKernelTunables=(yes|true|on|1)'
expect "NoNewPrivileges=yes" '^NoNewPrivileges=yes$'
expect "ProtectSystem=strict" '^ProtectSystem=strict$'
expect "listens on 127.0.0.1:9441 unless configured" \
    '^Environment=PCIE_TELEMETRY_LISTEN=127\.0\.0\.1:9441$'
expect "the environment file may override it" \
    '^EnvironmentFile=-/etc/default/pcie-telemetry-exporter$'
expect "restarts on failure" '^Restart=on-failure$'

tap_done
