#include <speex/speex_resampler.h>
