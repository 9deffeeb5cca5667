# build_stamp_probe: Benchmarks/latency/stamp-error.c against the installed library
# (.build/install), into .build/stamp-error, for CaptureTimeTests and the GStreamer sync scenario.
build_stamp_probe() {
  local root
  root=$(pwd)
  # shellcheck disable=SC2046
  cc -O2 -Wall -Wextra -Werror -o .build/stamp-error Benchmarks/latency/stamp-error.c \
    $(PKG_CONFIG_PATH="$root/.build/install/lib/pkgconfig" pkg-config --cflags --libs deskaudio libpipewire-0.3 libpulse) \
    -lm -Wl,-rpath,"$root/.build/install/lib"
  echo "cc stamp-error.c (pkg-config deskaudio libpipewire-0.3 libpulse)"
}
