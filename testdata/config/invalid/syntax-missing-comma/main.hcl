gpuform {
  stack = "ml-platform"
}

tenant "research" {
  admins = ["group:research-admins" "group:platform-admins"]
}
