# Sourced by the fixtures' build.sh scripts: a cache folder per build's inputs, so only the first
# build on a machine pays.
#
#   cached_build NAME CACHE_VARIABLE INPUT... -- TOOL...
#
# keys a folder under ${CACHE_VARIABLE:-${XDG_CACHE_HOME:-~/.cache}/sidecarset/NAME} by the inputs'
# contents and the Go version, and takes the folder's lock (another run may be building or pruning
# right now). If the folder already holds every TOOL it prints the folder and exits; otherwise it
# sets $out (the folder to fill) and $staging (where to build, made now, removed on failure) and
# returns. After building into $staging, the script calls cached_build_done.
cached_build() {
  local name="$1" variable="$2"
  shift 2
  local inputs=()
  while [ "$1" != "--" ]; do
    inputs+=("$1")
    shift
  done
  shift
  go_version="$(go env GOVERSION)"
  local key
  key="$(cat "${inputs[@]}" | sha256sum | cut -c1-16)-$go_version"
  root="${!variable:-${XDG_CACHE_HOME:-$HOME/.cache}/sidecarset/$name}"
  out="$root/$key"
  mkdir -p "$root"
  exec 9>"$root/.lock"
  flock 9
  local complete=true tool
  for tool in "$@"; do [ -x "$out/$tool" ] || complete=false; done
  if [ "$complete" = true ]; then
    echo "$out"
    exit 0
  fi
  staging="$(mktemp -d "$root/.build-XXXXXX")"
  trap 'rm -rf "$staging"' EXIT
}

# Moves $staging into place, removes builds for other inputs (dead weight: each is a few hundred
# MB) and prints the folder.
cached_build_done() {
  rm -rf "$out"
  mv "$staging" "$out"
  trap - EXIT
  local old
  for old in "$root"/*; do
    [ "$old" = "$out" ] || rm -rf "$old"
  done
  echo "$out"
}
