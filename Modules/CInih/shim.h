#pragma once
#include <ini.h>
