#!/bin/sh
# Builds the component into dist/, with its manifest beside it: what `aeterna ext test .` and
# an extensions directory want.
set -eu
cd "$(dirname "$0")"
cargo build --release --target wasm32-wasip2
mkdir -p dist
cp "${CARGO_TARGET_DIR:-target}/wasm32-wasip2/release/{{stem}}.wasm" dist/
cp {{stem}}.toml dist/
echo "built dist/{{stem}}.wasm"
