#!/usr/bin/env bash
# Installs the Debian packages the tests, the lab and the benchmarks use. Idempotent; does nothing
# when everything is present. Needs root (CI and the dev machines run as root).
set -euo pipefail
# command -> package; name:path -> package when path exists (a binary outside PATH, a font for headless Chromium)
declare -A need=(
  [xorriso]=xorriso [osirrox]=xorriso [gzip]=gzip [xz]=xz-utils [cpio]=cpio [openssl]=openssl [curl]=curl
  [docker-registry]=docker-registry [htpasswd]=apache2-utils [sshd:/usr/sbin/sshd]=openssh-server
  [ssh-keygen]=openssh-client [isoinfo]=genisoimage [git]=git [ip]=iproute2 [lsmod]=kmod
  [redis-server]=redis-server [unzip]=unzip [chromium]=chromium [fonts:/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf]=fonts-dejavu-core
)
missing=()
for k in "${!need[@]}"; do
  cmd=${k%%:*}; path=${k#*:}
  if [[ $k == *:* ]]; then [ -e "$path" ] && continue; else command -v "$cmd" >/dev/null && continue; fi
  missing+=("${need[$k]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then echo "install-deps: missing ${missing[*]}; run as root or install them" >&2; exit 1; fi
echo "install-deps: apt-get install ${missing[*]}" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
