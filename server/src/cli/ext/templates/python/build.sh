#!/bin/sh
# Builds the component into dist/, with its manifest beside it: what `aeterna ext test .` and
# an extensions directory want. Needs componentize-py (`pip install -r requirements.txt`).
set -eu
cd "$(dirname "$0")"
mkdir -p dist
componentize-py -d wit -w extension componentize app -o dist/{{stem}}.wasm
cp {{stem}}.toml dist/
