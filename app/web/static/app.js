// loomsync pages: progressive enhancement only; every page works without it.
"use strict";
