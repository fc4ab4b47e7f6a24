#pragma once
// Linux interfaces that Glibc's Swift module does not bring in.
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/inotify.h>
