#pragma once
#include <crypt.h>
