print("touchlockd")
