gpuform {
  stack     = "ml-platform"
  scheduler = "kueue"
}

# 65 pools, and a tenant with a quota on each: 65 flavors in its
# ClusterQueue, where Kueue takes at most 64.
pool "l4" {
  for_each = toset(["00", "01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27", "28", "29", "30", "31", "32", "33", "34", "35", "36", "37", "38", "39", "40", "41", "42", "43", "44", "45", "46", "47", "48", "49", "50", "51", "52", "53", "54", "55", "56", "57", "58", "59", "60", "61", "62", "63", "64"])
  gpu      = "L4"
}

tenant "research" {
  quota "l4-00" {
    gpus = 1
  }
  quota "l4-01" {
    gpus = 1
  }
  quota "l4-02" {
    gpus = 1
  }
  quota "l4-03" {
    gpus = 1
  }
  quota "l4-04" {
    gpus = 1
  }
  quota "l4-05" {
    gpus = 1
  }
  quota "l4-06" {
    gpus = 1
  }
  quota "l4-07" {
    gpus = 1
  }
  quota "l4-08" {
    gpus = 1
  }
  quota "l4-09" {
    gpus = 1
  }
  quota "l4-10" {
    gpus = 1
  }
  quota "l4-11" {
    gpus = 1
  }
  quota "l4-12" {
    gpus = 1
  }
  quota "l4-13" {
    gpus = 1
  }
  quota "l4-14" {
    gpus = 1
  }
  quota "l4-15" {
    gpus = 1
  }
  quota "l4-16" {
    gpus = 1
  }
  quota "l4-17" {
    gpus = 1
  }
  quota "l4-18" {
    gpus = 1
  }
  quota "l4-19" {
    gpus = 1
  }
  quota "l4-20" {
    gpus = 1
  }
  quota "l4-21" {
    gpus = 1
  }
  quota "l4-22" {
    gpus = 1
  }
  quota "l4-23" {
    gpus = 1
  }
  quota "l4-24" {
    gpus = 1
  }
  quota "l4-25" {
    gpus = 1
  }
  quota "l4-26" {
    gpus = 1
  }
  quota "l4-27" {
    gpus = 1
  }
  quota "l4-28" {
    gpus = 1
  }
  quota "l4-29" {
    gpus = 1
  }
  quota "l4-30" {
    gpus = 1
  }
  quota "l4-31" {
    gpus = 1
  }
  quota "l4-32" {
    gpus = 1
  }
  quota "l4-33" {
    gpus = 1
  }
  quota "l4-34" {
    gpus = 1
  }
  quota "l4-35" {
    gpus = 1
  }
  quota "l4-36" {
    gpus = 1
  }
  quota "l4-37" {
    gpus = 1
  }
  quota "l4-38" {
    gpus = 1
  }
  quota "l4-39" {
    gpus = 1
  }
  quota "l4-40" {
    gpus = 1
  }
  quota "l4-41" {
    gpus = 1
  }
  quota "l4-42" {
    gpus = 1
  }
  quota "l4-43" {
    gpus = 1
  }
  quota "l4-44" {
    gpus = 1
  }
  quota "l4-45" {
    gpus = 1
  }
  quota "l4-46" {
    gpus = 1
  }
  quota "l4-47" {
    gpus = 1
  }
  quota "l4-48" {
    gpus = 1
  }
  quota "l4-49" {
    gpus = 1
  }
  quota "l4-50" {
    gpus = 1
  }
  quota "l4-51" {
    gpus = 1
  }
  quota "l4-52" {
    gpus = 1
  }
  quota "l4-53" {
    gpus = 1
  }
  quota "l4-54" {
    gpus = 1
  }
  quota "l4-55" {
    gpus = 1
  }
  quota "l4-56" {
    gpus = 1
  }
  quota "l4-57" {
    gpus = 1
  }
  quota "l4-58" {
    gpus = 1
  }
  quota "l4-59" {
    gpus = 1
  }
  quota "l4-60" {
    gpus = 1
  }
  quota "l4-61" {
    gpus = 1
  }
  quota "l4-62" {
    gpus = 1
  }
  quota "l4-63" {
    gpus = 1
  }
  quota "l4-64" {
    gpus = 1
  }
}
