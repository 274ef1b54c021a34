# Sourced by the scripts that run cargo.
#
# Some sandboxes bind a regular file over /dev/null. Build scripts that
# probe the compiler send rustc's errors there, and cargo's own target
# probe (`rustc -`, stdin = /dev/null) later reads them back as source and
# fails. Emptying the file before each cargo command keeps the probe clean.
reset_devnull() {
  if [ -f /dev/null ] && [ -w /dev/null ]; then
    : > /dev/null
  fi
}

cargo_clean_null() {
  reset_devnull
  cargo "$@"
}
