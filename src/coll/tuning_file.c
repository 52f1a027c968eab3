/* PLACEHOLDER: being written (tuning file reader). */
#include "coll/tuning_file.h"

#include <stdio.h>

int strata_tuning_file_load(const char *path, struct strata_rule *rules, char *err,
                            size_t errlen)
{
    snprintf(err, errlen, "%s: tuning files are not read yet", path);
    return -1;
}
