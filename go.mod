module github.com/pmauthority/pmauthority

go 1.26.8
