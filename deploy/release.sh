#!/usr/bin/env bash
# Cuts a release: the two static musl binaries (x86_64 built natively, aarch64 cross-built),
# one archive per platform, SHA256SUMS, and the ACP registry entry for this version.
#
#   deploy/release.sh                  build, pack and check; writes to --out
#   deploy/release.sh --out DIR        where the archives go (default: <target dir>/dist/<version>)
#   deploy/release.sh --no-check       skip the registry check (cargo test ... registry::)
#   deploy/release.sh --manifest       print the registry entry (agent.json) for Cargo.toml's
#                                      version and exit; builds nothing
#
# The version, name, description, license and repository come from Cargo.toml. Archives
# are iac-code-<version>-<platform>.tar.gz (platform: linux-x86_64, linux-aarch64), flat,
# with the binary `iac-code`, the man page `iac-code.1`, README.md and LICENSE when there is
# one; they are reproducible (sorted, owner 0, mtime of the last commit or
# SOURCE_DATE_EPOCH). deploy/registry/iac-code/agent.json is rewritten for the version
# (commit it), and a copy goes under DIR/registry/iac-code/ with the icon, ready to submit.
# Archive URLs: $RELEASE_BASE_URL/<archive>, by default the repository's GitHub release
# download folder for v<version>.
#
# Needs: rustup targets x86_64-unknown-linux-musl and aarch64-unknown-linux-musl; C
# compilers x86_64-linux-musl-gcc (Debian: musl-tools) and aarch64-linux-gnu-gcc (Debian:
# gcc-aarch64-linux-gnu), which also links (.cargo/config.toml); qemu-aarch64 (Debian:
# qemu-user) to smoke-test the aarch64 binary, skipped with a note when missing.
# Exit status: 0 done, 1 a step failed, 2 bad arguments.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=
check=1
manifest_only=
while [ $# -gt 0 ]; do
    case "$1" in
        --out)
            [ $# -ge 2 ] || { echo "release.sh: --out needs a directory" >&2; exit 2; }
            out=$2
            shift
            ;;
        --no-check) check= ;;
        --manifest) manifest_only=1 ;;
        -h | --help)
            sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "release.sh: unknown argument '$1'" >&2
            echo "usage: deploy/release.sh [--out DIR] [--no-check] | --manifest" >&2
            exit 2
            ;;
    esac
    shift
done

# A key of Cargo.toml's [package] table, a plain one-line string.
package_key() {
    awk -v key="$1" '
        /^\[/ { in_package = ($0 == "[package]") ; next }
        in_package && $1 == key && $2 == "=" {
            sub(/^[^=]*=[ \t]*"/, ""); sub(/"[ \t]*$/, ""); print; exit
        }' "$root/Cargo.toml"
}
name=$(package_key name)
version=$(package_key version)
description=$(package_key description)
license=$(package_key license)
repository=$(package_key repository)
for field in name version description license repository; do
    value=${!field}
    if [ -z "$value" ]; then
        echo "release.sh: Cargo.toml's [package] has no $field" >&2
        exit 1
    fi
    case "$value" in
        *'"'* | *'\'*)
            echo "release.sh: Cargo.toml's $field has a quote or backslash; write agent.json by hand" >&2
            exit 1
            ;;
    esac
done
if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    echo "release.sh: version '$version' is not x.y.z, which the ACP registry requires" >&2
    exit 1
fi
base_url=${RELEASE_BASE_URL:-$repository/releases/download/v$version}
base_url=${base_url%/}
platforms=(linux-x86_64 linux-aarch64)

# The registry entry (its format: deploy/registry/agent.schema.json).
manifest() {
    cat <<EOF
{
  "id": "$name",
  "name": "$name",
  "version": "$version",
  "description": "$description",
  "repository": "$repository",
  "authors": ["The $name authors"],
  "license": "$license",
  "distribution": {
    "binary": {
EOF
    local i=0
    for platform in "${platforms[@]}"; do
        i=$((i + 1))
        local comma=","
        [ "$i" -lt "${#platforms[@]}" ] || comma=
        cat <<EOF
      "$platform": {
        "archive": "$base_url/$name-$version-$platform.tar.gz",
        "cmd": "./$name",
        "args": ["acp"]
      }$comma
EOF
    done
    cat <<EOF
    }
  }
}
EOF
}

if [ -n "$manifest_only" ]; then
    manifest
    exit 0
fi

target_dir=${CARGO_TARGET_DIR:-$root/target}
out=${out:-$target_dir/dist/$version}
for tool in cargo rustup tar gzip sha256sum readelf; do
    command -v "$tool" >/dev/null 2>&1 || { echo "release.sh: $tool not found" >&2; exit 1; }
done
installed=$(rustup target list --installed)
for triple in x86_64-unknown-linux-musl aarch64-unknown-linux-musl; do
    if ! grep -qx "$triple" <<<"$installed"; then
        echo "release.sh: the Rust target $triple is missing: rustup target add $triple" >&2
        exit 1
    fi
done
for cc in x86_64-linux-musl-gcc aarch64-linux-gnu-gcc; do
    if ! command -v "$cc" >/dev/null 2>&1; then
        echo "release.sh: $cc not found (Debian: apt-get install musl-tools gcc-aarch64-linux-gnu)" >&2
        exit 1
    fi
done

# The binaries. ring's C and assembly for aarch64 go through the cross gcc.
cd "$root"
export CC_aarch64_unknown_linux_musl=aarch64-linux-gnu-gcc
export AR_aarch64_unknown_linux_musl=aarch64-linux-gnu-ar
for triple in x86_64-unknown-linux-musl aarch64-unknown-linux-musl; do
    echo "building $triple"
    start=$(date +%s)
    cargo build --release --locked --target "$triple"
    echo "built $triple in $(($(date +%s) - start)) s"
done

mkdir -p "$out"
out=$(cd "$out" && pwd)
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
sums=()
for platform in "${platforms[@]}"; do
    case "$platform" in
        linux-x86_64) triple=x86_64-unknown-linux-musl run=() ;;
        linux-aarch64) triple=aarch64-unknown-linux-musl run=(qemu-aarch64) ;;
    esac
    bin="$target_dir/$triple/release/$name"
    headers=$(readelf -lW "$bin")
    if grep -q 'INTERP' <<<"$headers"; then
        echo "release.sh: $bin asks for a dynamic loader: not a static binary" >&2
        exit 1
    fi
    # A smoke test where the binary can run: its version, and an initialize over stdio.
    if [ ${#run[@]} -eq 0 ] || command -v "${run[0]}" >/dev/null 2>&1; then
        said=$("${run[@]}" "$bin" --version)
        if [ "$said" != "$name $version" ]; then
            echo "release.sh: $bin --version says '$said', not '$name $version'" >&2
            exit 1
        fi
        init='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"terminal":true,"_meta":{"terminal-auth":true}}}}'
        reply=$(printf '%s\n' "$init" | "${run[@]}" "$bin" acp 2>/dev/null || true)
        reply=${reply%%$'\n'*}
        if ! grep -q '"protocolVersion":1' <<<"$reply"; then
            echo "release.sh: $bin did not answer initialize: $reply" >&2
            exit 1
        fi
        if ! grep -q -e '"type":"agent"' -e '"type":"terminal"' -e '"authMethods":\[{' <<<"$reply"; then
            echo "warning: $platform: initialize lists no auth method of type agent or terminal;" \
                "the registry's CI requires one" >&2
        fi
    else
        echo "note: ${run[0]} not found: $platform is packed without a smoke test" >&2
    fi
    dir="$stage/$platform"
    mkdir -p "$dir"
    install -m 755 "$bin" "$dir/$name"
    install -m 644 "$root/man/$name.1" "$dir/$name.1"
    install -m 644 "$root/README.md" "$dir/README.md"
    [ ! -f "$root/LICENSE" ] || install -m 644 "$root/LICENSE" "$dir/LICENSE"
    archive="$name-$version-$platform.tar.gz"
    (cd "$dir" && tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
        --format=gnu -cf - -- *) | gzip -n -9 >"$out/.$archive.tmp"
    mv -f "$out/.$archive.tmp" "$out/$archive"
    sums+=("$archive")
    echo "packed $out/$archive ($(stat -c %s "$out/$archive") bytes; binary $(stat -c %s "$bin"))"
done
(cd "$out" && sha256sum -- "${sums[@]}" >.SHA256SUMS.tmp && mv -f .SHA256SUMS.tmp SHA256SUMS)

# The registry entry: in the tree for this version (commit it), and beside the archives.
entry="$root/deploy/registry/$name"
manifest >"$entry/.agent.json.tmp"
if cmp -s "$entry/.agent.json.tmp" "$entry/agent.json"; then
    rm -f "$entry/.agent.json.tmp"
else
    mv -f "$entry/.agent.json.tmp" "$entry/agent.json"
    echo "updated deploy/registry/$name/agent.json for $version: commit it"
fi
mkdir -p "$out/registry/$name"
cp "$entry/agent.json" "$entry/icon.svg" "$out/registry/$name/"
if [ -n "$check" ]; then
    cargo test --locked --test integration registry::
fi
echo "release $version in $out: ${sums[*]} SHA256SUMS registry/$name/"
