#pragma once
// libudev: the properties udev's rules and hwdb gave a device, read from the database
// udevd keeps (its own format); libudev1 is in every Debian system.
#include <libudev.h>
