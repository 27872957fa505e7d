priority "batch" {
  value = 1000
}

tenant "research" {
  priorities = [priority.batch]
}
