/* The smallest period of a sequence (see period.h), by the prefix function (Knuth-Morris-
 * Pratt): the longest proper prefix that is also a suffix has length n - p. */
#include "summary/period.h"

#include <stdlib.h>

#include "base/alloc.h"

size_t rm_smallest_period(const uint32_t *ids, size_t n)
{
    if (n == 0) return 0;
    size_t *pi = rm_xcalloc(n, sizeof *pi);
    for (size_t i = 1; i < n; i++) {
        size_t k = pi[i - 1];
        while (k > 0 && ids[i] != ids[k])
            k = pi[k - 1];
        if (ids[i] == ids[k]) k++;
        pi[i] = k;
    }
    size_t p = n - pi[n - 1];
    free(pi);
    return p;
}
