#include "a.h"
  #  include <b/c.h>
/* #include "x" */ #include "y.h"
#include MACRO
#include_next <z>
// #include "no"
"#include str"
