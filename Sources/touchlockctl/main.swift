print("touchlockctl")
