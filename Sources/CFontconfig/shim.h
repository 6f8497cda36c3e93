#ifndef CHUTE_CFONTCONFIG_SHIM_H
#define CHUTE_CFONTCONFIG_SHIM_H

// fontconfig, which LibreOffice draws text with: the document engine asks it which characters the installed fonts
// cover, to say when a document's text had no font (and was drawn as boxes).
#include <fontconfig/fontconfig.h>

#endif
