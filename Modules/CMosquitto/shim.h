#pragma once
/* libmosquitto (Debian's libmosquitto-dev), for touchlock-mqtt only. */
#include <mosquitto.h>
