#include "base/decimal.h"

#include <stdbool.h>
#include <stdint.h>

/* Powers of ten exactly representable as doubles: with a mantissa below 2^53 one multiply or
 * divide gives the correctly rounded result. */
static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static double scale10(double v, int e)
{
    while (e > 22) {
        v *= 1e22;
        e -= 22;
        if (v > 1e308) return v * 10; /* overflows to inf; caller rejects */
    }
    while (e < -22) {
        v /= 1e22;
        e += 22;
        if (v == 0) return 0;
    }
    return e >= 0 ? v * pow10_exact[e] : v / pow10_exact[-e];
}

size_t rm_parse_decimal(const char *s, size_t len, double *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < len && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    uint64_t mant = 0;
    int ndig = 0, exp10 = 0;
    size_t digits_seen = 0;
    while (i < len && s[i] >= '0' && s[i] <= '9') {
        if (ndig < 19) {
            mant = mant * 10 + (uint64_t)(s[i] - '0');
            if (mant) ndig++;
        } else {
            exp10++; /* digits beyond 19 only scale */
        }
        digits_seen++;
        i++;
    }
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            if (ndig < 19) {
                mant = mant * 10 + (uint64_t)(s[i] - '0');
                if (mant) ndig++;
                exp10--;
            }
            digits_seen++;
            i++;
        }
    }
    if (digits_seen == 0) return 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        bool eneg = false;
        if (j < len && (s[j] == '+' || s[j] == '-')) eneg = s[j++] == '-';
        if (j < len && s[j] >= '0' && s[j] <= '9') {
            int e = 0;
            while (j < len && s[j] >= '0' && s[j] <= '9') {
                if (e < 100000) e = e * 10 + (s[j] - '0');
                j++;
            }
            exp10 += eneg ? -e : e;
            i = j;
        }
    }
    double v = (double)mant;
    if (exp10 && mant) v = scale10(v, exp10);
    *out = neg ? -v : v;
    return i;
}
