# SPDX-License-Identifier: GPL-2.0-or-later
#
# An apt of a script's own, sourced by scripts/pciutils.sh (Debian
# unstable's amd64 index) and scripts/guest-arm64.sh (Debian 12's arm64
# index): its own sources, lists and cache in one directory, no
# preferences, no status of the machine (nothing is ever installed with
# it: packages are downloaded and unpacked), one architecture, no
# translations. The machine's apt.conf.d still applies (proxies), less its
# update hooks; the machine's own apt sources and architectures are left
# alone.

# private_apt_conf DIR ARCH SOURCES WRITER: DIR/apt.conf for apt on the
# sources file SOURCES (one-line or deb822 style) for ARCH, with lists and
# cache under DIR; WRITER names the script in the file's first line. Use
# it with apt-get -c DIR/apt.conf and apt-cache -c DIR/apt.conf.
private_apt_conf() {
    local a=$1 arch=$2 sources=$3 writer=$4 t
    mkdir -p "$a/lists/partial" "$a/cache/archives/partial" "$a/empty"
    {
        echo "// written by $writer: apt on $sources ($arch), in $a"
        echo "Dir::Etc::sourcelist \"$sources\";"
        echo "Dir::Etc::sourceparts \"$a/empty\";"
        echo "Dir::Etc::preferences \"/dev/null\";"
        echo "Dir::Etc::preferencesparts \"$a/empty\";"
        echo "Dir::State::Lists \"$a/lists\";"
        echo "Dir::State::status \"/dev/null\";"
        echo "Dir::Cache \"$a/cache\";"
        # a binary cache of the index, or each apt-cache call reads it anew
        echo "Dir::Cache::pkgcache \"pkgcache.bin\";"
        echo "Dir::Cache::srcpkgcache \"\";"
        # the lists unpacked: apt-cache show reads a record at its offset
        echo "Acquire::GzipIndexes \"false\";"
        echo "APT::Architecture \"$arch\";"
        echo "#clear APT::Architectures;"
        echo "APT::Architectures:: \"$arch\";"
        echo "Acquire::Languages \"none\";"
        echo "#clear APT::Update::Pre-Invoke;"
        echo "#clear APT::Update::Post-Invoke;"
        echo "#clear APT::Update::Post-Invoke-Success;"
        for t in Contents-deb Contents-udeb Contents-deb-legacy DEP-11 \
                 DEP-11-icons DEP-11-icons-small DEP-11-icons-large \
                 DEP-11-icons-hidpi DEP-11-icons-large-hidpi; do
            echo "Acquire::IndexTargets::deb::$t::DefaultEnabled \"false\";"
        done
        # as root apt would download as _apt, who cannot reach a cache in
        # /root: it would only say so and download as root anyway
        [ "$(id -u)" != 0 ] || echo 'APT::Sandbox::User "root";'
    } > "$a/apt.conf"
}
