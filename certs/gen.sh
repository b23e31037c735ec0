#!/usr/bin/env bash
# Make a CA and a TLS serving certificate for the sidecarset admission webhook, with openssl only.
#
# The Kubernetes API server calls the webhook at https://<service>.<namespace>.svc:443 and checks the
# certificate against the caBundle of the webhook configurations; Go ignores the Common Name, so the
# names must be subjectAltNames. The CRD's conversion webhook calls the same pods through a second
# Service (docs/adr/0036-conversion-service.md), whose names the certificate carries too.
#
# Output (in --out, default certs/out next to this script; gitignored):
#   ca.crt, ca.key      the CA. Kept across runs: an existing CA is reused (so the caBundle already in
#                       the cluster stays valid) and only replaced with --force.
#   tls.crt, tls.key    the serving certificate and key, signed by the CA. Made anew on every run.
#   ca-bundle.b64       the CA certificate as one base64 line: the webhook configurations' caBundle.
#   kustomization.yaml  an overlay of manifests/base that adds the caBundle and the TLS Secret, so
#                       `kubectl apply -k <out>` installs everything (written when manifests/ is found).
# Standard output: the caBundle (one line), then, with --secret-cmd, the kubectl command that creates
# or updates the Secret. Everything else goes to standard error, so CA_BUNDLE="$(certs/gen.sh)" works.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: certs/gen.sh [options]

  --service NAME      Service name of the webhook        (env CERT_SERVICE,   default sidecarset-webhook)
  --conversion-service NAME
                      Service of the conversion webhook  (env CERT_CONVERSION_SERVICE,
                                                          default sidecarset-conversion)
  --namespace NS      Namespace of the Service           (env CERT_NAMESPACE, default sidecarset-system)
  --out DIR           Output directory                   (env CERT_OUT_DIR,   default certs/out)
  --days N            Serving certificate validity, days (env CERT_DAYS,      default 365)
  --ca-days N         CA validity, days (new CA only)    (env CERT_CA_DAYS,   default 3650)
  --secret-name NAME  Secret name for --secret-cmd       (env CERT_SECRET,    default sidecarset-webhook-tls)
  --secret-cmd        Also print the kubectl command that creates/updates the TLS Secret
  --force             Replace an existing CA (the caBundle in the cluster must then be updated)
  -h, --help          Show this help
USAGE
}

die() {
  echo "gen.sh: $*" >&2
  exit 1
}

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
service="${CERT_SERVICE:-sidecarset-webhook}"
conversion_service="${CERT_CONVERSION_SERVICE:-sidecarset-conversion}"
namespace="${CERT_NAMESPACE:-sidecarset-system}"
out_dir="${CERT_OUT_DIR:-${script_dir}/out}"
days="${CERT_DAYS:-365}"
ca_days="${CERT_CA_DAYS:-3650}"
secret_name="${CERT_SECRET:-sidecarset-webhook-tls}"
secret_cmd=false
force=false

need_value() {
  [[ $# -ge 2 && -n "$2" ]] || die "$1 needs a value"
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --service) need_value "$@"; service="$2"; shift 2 ;;
    --conversion-service) need_value "$@"; conversion_service="$2"; shift 2 ;;
    --namespace) need_value "$@"; namespace="$2"; shift 2 ;;
    --out) need_value "$@"; out_dir="$2"; shift 2 ;;
    --days) need_value "$@"; days="$2"; shift 2 ;;
    --ca-days) need_value "$@"; ca_days="$2"; shift 2 ;;
    --secret-name) need_value "$@"; secret_name="$2"; shift 2 ;;
    --secret-cmd) secret_cmd=true; shift ;;
    --force) force=true; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done

# DNS-1035 label for the Service, DNS-1123 label for the namespace: both end up in DNS names.
label_re='^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$'
[[ "$service" =~ $label_re ]] || die "invalid service name: $service"
[[ "$conversion_service" =~ $label_re ]] || die "invalid service name: $conversion_service"
[[ "$namespace" =~ $label_re ]] || die "invalid namespace: $namespace"
[[ "$days" =~ ^[1-9][0-9]*$ ]] || die "--days must be a positive integer: $days"
[[ "$ca_days" =~ ^[1-9][0-9]*$ ]] || die "--ca-days must be a positive integer: $ca_days"
command -v openssl >/dev/null || die "openssl not found"

mkdir -p "$out_dir"
umask 077
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

ca_crt="$out_dir/ca.crt"
ca_key="$out_dir/ca.key"
tls_crt="$out_dir/tls.crt"
tls_key="$out_dir/tls.key"
bundle="$out_dir/ca-bundle.b64"

new_ec_key() {
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null
}

public_key_of_cert() { openssl x509 -in "$1" -noout -pubkey; }
public_key_of_key() { openssl pkey -in "$1" -pubout; }

if [[ -e "$ca_crt" || -e "$ca_key" ]] && [[ "$force" != true ]]; then
  [[ -f "$ca_crt" && -f "$ca_key" ]] ||
    die "found only one of $ca_crt and $ca_key; remove it or pass --force to make a new CA"
  [[ "$(public_key_of_cert "$ca_crt")" == "$(public_key_of_key "$ca_key")" ]] ||
    die "$ca_key does not belong to $ca_crt; pass --force to make a new CA"
  openssl x509 -in "$ca_crt" -noout -checkend 0 >/dev/null ||
    die "the CA in $ca_crt has expired; pass --force to make a new CA"
  echo "gen.sh: reusing the CA in $ca_crt (--force replaces it)" >&2
else
  echo "gen.sh: making a new CA in $ca_crt" >&2
  cat >"$work/ca.cnf" <<CNF
[req]
distinguished_name = dn
prompt = no
x509_extensions = ca_ext
[dn]
CN = sidecarset-webhook-ca
[ca_ext]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
CNF
  new_ec_key "$work/ca.key"
  openssl req -x509 -new -sha256 -key "$work/ca.key" -days "$ca_days" \
    -config "$work/ca.cnf" -out "$work/ca.crt"
  # Write both only once both exist, so an interrupted run never leaves half a CA behind.
  mv -f "$work/ca.key" "$ca_key"
  mv -f "$work/ca.crt" "$ca_crt"
fi

fqdn="${service}.${namespace}.svc"
# The four names of a Service inside the cluster, as subjectAltName entries.
service_names() {
  local svc="${1}.${namespace}.svc"
  echo "DNS:${1}, DNS:${1}.${namespace}, DNS:${svc}, DNS:${svc}.cluster.local"
}
cat >"$work/leaf.cnf" <<CNF
[req]
distinguished_name = dn
prompt = no
[dn]
CN = ${fqdn}
[leaf_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = $(service_names "$service"), $(service_names "$conversion_service")
CNF
new_ec_key "$work/tls.key"
openssl req -new -sha256 -key "$work/tls.key" -config "$work/leaf.cnf" -out "$work/tls.csr"
openssl x509 -req -sha256 -in "$work/tls.csr" -CA "$ca_crt" -CAkey "$ca_key" \
  -set_serial "0x$(openssl rand -hex 16)" -days "$days" \
  -extfile "$work/leaf.cnf" -extensions leaf_ext -out "$work/tls.crt" 2>/dev/null
openssl verify -CAfile "$ca_crt" "$work/tls.crt" >/dev/null || die "the new certificate does not verify"
# The key first: a server that reloads on change then never pairs the new certificate with the old key
# for long, and a Secret made from these files is consistent once both are written.
mv -f "$work/tls.key" "$tls_key"
mv -f "$work/tls.crt" "$tls_crt"
chmod 644 "$ca_crt" "$tls_crt"

ca_bundle="$(openssl base64 -A -in "$ca_crt")"
printf '%s\n' "$ca_bundle" >"$bundle"
chmod 644 "$bundle"

echo "gen.sh: serving certificate for ${fqdn} (valid ${days} days) in $tls_crt" >&2

# relpath FROM TO: the path of directory TO relative to directory FROM (both absolute, physical).
# kustomize refuses absolute paths in resources, and `realpath --relative-to` is not everywhere.
relpath() {
  local from="$1" to="$2" up=""
  while [[ "$from" != "/" && "$to" != "$from" && "$to" != "$from/"* ]]; do
    from="$(dirname "$from")"
    up="../$up"
  done
  local rest="${to#"$from"}"
  rest="${rest#/}"
  printf '%s\n' "${up}${rest:-.}"
}

# An overlay of manifests/base in the output directory: `kubectl apply -k <out>` installs everything with
# this CA as every webhook's caBundle and the serving certificate as the TLS Secret.
# manifests/base, not manifests/: the default install there manages its own certificate.
manifests_dir="$script_dir/../manifests/base"
if [[ -f "$manifests_dir/kustomization.yaml" ]]; then
  base="$(relpath "$(cd "$out_dir" && pwd -P)" "$(cd "$manifests_dir" && pwd -P)")"
  cat >"$out_dir/kustomization.yaml" <<KUSTOMIZATION
# Generated by certs/gen.sh; holds a private key next to it: never commit this directory.
# Apply: kubectl apply -k ${out_dir}
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: ${namespace}
resources:
  - ${base}
secretGenerator:
  - name: ${secret_name}
    type: kubernetes.io/tls
    files: [tls.crt, tls.key, ca.crt]
generatorOptions:
  disableNameSuffixHash: true
replacements:
  # The Secret's ca.crt is the base64 of the CA certificate: exactly what caBundle wants.
  - source:
      kind: Secret
      name: ${secret_name}
      fieldPath: data.[ca.crt]
    targets:
      - select:
          kind: MutatingWebhookConfiguration
        fieldPaths: [webhooks.*.clientConfig.caBundle]
      - select:
          kind: ValidatingWebhookConfiguration
        fieldPaths: [webhooks.*.clientConfig.caBundle]
      - select:
          kind: CustomResourceDefinition
          name: sidecarsets.apps.kruise.io
        fieldPaths: [spec.conversion.webhook.clientConfig.caBundle]
        options:
          create: true
KUSTOMIZATION
  chmod 644 "$out_dir/kustomization.yaml"
  echo "gen.sh: install with: kubectl apply -k $out_dir" >&2
fi
printf '%s\n' "$ca_bundle"
if [[ "$secret_cmd" == true ]]; then
  printf 'kubectl -n %q create secret tls %q --cert=%q --key=%q --dry-run=client -o yaml | kubectl apply -f -\n' \
    "$namespace" "$secret_name" "$tls_crt" "$tls_key"
fi
